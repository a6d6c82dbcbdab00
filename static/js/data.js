// The Data page: ticking rows (the header box ticks the page, Shift+click a range), the count of
// ticked rows, and Apply only when something is ticked or the action is for all rows that match.
// Only the chosen action's controls show (data-for: the actions a control is for); without a
// script every control shows. Add or remove tag without a tag is stopped here, with a message.
(() => {
  const form = document.getElementById("data-bulk");
  if (!form) return;
  const boxes = () => Array.from(form.querySelectorAll('input[name="ids"]'));
  const all = document.getElementById("select-all");
  const count = document.getElementById("selected-count");
  const go = document.getElementById("bulk-go");
  let last = null;
  const matching = document.getElementById("scope-matching");
  const update = () => {
    const n = boxes().filter((b) => b.checked).length;
    if (count) count.textContent = String(n);
    if (go) go.disabled = n === 0 && !(matching && matching.checked);
    if (all) all.checked = n > 0 && n === boxes().length;
  };
  if (all) all.addEventListener("change", () => { boxes().forEach((b) => { b.checked = all.checked; }); update(); });
  form.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.name === "scope") update();
  });
  form.addEventListener("click", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || box.name !== "ids") return;
    const list = boxes();
    if (event.shiftKey && last !== null) {
      const [a, b] = [list.indexOf(last), list.indexOf(box)].sort((x, y) => x - y);
      list.slice(a, b + 1).forEach((other) => { other.checked = box.checked; });
    }
    last = box;
    update();
  });
  const action = document.getElementById("bulk-action");
  const tag = document.getElementById("bulk-tag");
  const shown = () => {
    form.querySelectorAll("[data-for]").forEach((control) => {
      control.hidden = !(control.dataset.for || "").split(" ").includes(action ? action.value : "");
    });
    if (tag) tag.setCustomValidity("");
  };
  if (action) action.addEventListener("change", shown);
  if (tag) tag.addEventListener("change", () => tag.setCustomValidity(""));
  form.addEventListener("submit", (event) => {
    if (!tag || tag.hidden || tag.value || !action) return;
    event.preventDefault();
    tag.setCustomValidity(`Choose a tag to ${action.value === "tag" ? "add" : "remove"}.`);
    tag.reportValidity();
  });
  shown();
  update();
})();
