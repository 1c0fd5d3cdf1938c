"""The Example Cloud provider's declaration: light, so listing models imports nothing more."""

from amvicc.vlm.providers import Provider

PROVIDER = Provider(
    name="example",
    pattern="example:<model>",
    kind="api",
    runs_with="Example Cloud chat completions",
    source="https://api.example.invalid/v1",
    key_env="EXAMPLE_API_KEY",
    defaults="temperature 0, 512 tokens",
    notes="a provider added by the amvicc-example-provider package",
    models="amvicc_example_provider.backend:known_models",
    opener="amvicc_example_provider.backend:open_example",
)
