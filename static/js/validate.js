// Validation by keyboard: digits pick a label and submit, letters toggle flags, "s" skips,
// "z" undoes the last vote while its item is open.
(function () {
  "use strict";
  const form = document.getElementById("vote-form");
  const undo = document.getElementById("undo-form");
  document.addEventListener("keydown", (event) => {
    if (undo && (event.key === "z" || event.key === "Z") && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      undo.requestSubmit();
    }
  });
  if (!form) return;
  const started = Date.now();
  let sent = false;
  form.addEventListener("submit", (event) => {
    if (sent) { event.preventDefault(); return; }
    sent = true;
    form.querySelector("input[name=seconds_spent]").value = Math.round((Date.now() - started) / 1000);
  });
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || /^(TEXTAREA|INPUT)$/.test(event.target.tagName) && event.target.type === "text") return;
    if (event.key === "z" || event.key === "Z") return;  // undo, above
    const button = form.querySelector(`button[data-key="${event.key}"]`);
    if (button) { event.preventDefault(); form.requestSubmit(button); return; }
    const flag = form.querySelector(`input[data-key="${event.key.toLowerCase()}"]`);
    if (flag) { event.preventDefault(); flag.checked = !flag.checked; return; }
    if (event.key === "s" || event.key === "S") { event.preventDefault(); document.getElementById("skip-form").requestSubmit(); }
  });
})();
