"""Helpers for testing amvicc and trying it offline: a fake OpenAI-compatible server."""
