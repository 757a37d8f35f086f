// A notice the person reads until it goes away by itself or is dismissed (`hide`); '' hides it.
// Shared by the call and chat pages.

/** `show(text)` writes into `textElement` (or `box` itself) and shows `box`; after `autoHideMs` it hides again. */
export function notice(box, { textElement = box, autoHideMs = 0 } = {}) {
  let timer = null;
  const hide = () => {
    clearTimeout(timer);
    box.hidden = true;
    textElement.textContent = '';
  };
  const show = (text) => {
    if (!text) return hide();
    textElement.textContent = text;
    box.hidden = false;
    clearTimeout(timer);
    if (autoHideMs) timer = setTimeout(hide, autoHideMs);
  };
  return { show, hide };
}
