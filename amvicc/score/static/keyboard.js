() => {
  // Keyboard shortcuts of the scoring page: Gradio runs this function once the page loads.
  // Keymaps by screen; "<screen>:<kind>" is a screen's keymap while its details panel shows
  // an item of that kind (data-kind: "audit:ladder" for a ladder reply).
  const shortcuts = __SHORTCUTS__;  // filled in by amvicc.score.app.keyboard_script
  const navigation = new Set(["previous", "next"]);
  let pending = null;
  const shown = (el) => el !== null && el.offsetParent !== null;
  const screens = Object.keys(shortcuts).filter((s) => !s.includes(":"));
  const activeScreen = () =>
    screens.find((s) => shown(document.getElementById(s + "-details")));
  const shownPanel = (screen) => document.querySelector("#" + screen + "-details [data-item]");
  const shownItem = (screen) => {
    const el = shownPanel(screen);
    return el ? el.dataset.item : "";
  };
  const keymap = (screen) => {
    const el = shownPanel(screen);
    const kind = el ? el.dataset.kind : undefined;
    return (kind && shortcuts[screen + ":" + kind]) || shortcuts[screen];
  };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    if (target instanceof HTMLElement &&
        (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const screen = activeScreen();
    if (!screen) return;
    const action = keymap(screen)[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (!action) return;
    event.preventDefault();
    event.stopPropagation();
    if (action === "comment") {
      const box = document.querySelector("#" + screen + "-comment textarea");
      if (box) box.focus();
      return;
    }
    const button = document.getElementById(screen + "-" + action);
    if (!shown(button) || button.disabled) return;
    if (!navigation.has(action)) {
      const item = shownItem(screen);
      if (!item) return;
      if (pending && pending.screen === screen && pending.item === item &&
          Date.now() - pending.at < 5000) return;
      pending = {screen: screen, item: item, at: Date.now()};
    }
    button.click();
  }, true);
}
