// Validation by keyboard: digits pick a label and submit, letters toggle flags, "s" skips,
// "z" undoes the last vote while its item is open. In free-text projects the answer box has
// the focus: Enter submits the answer, Esc leaves the box for the keys above.
(function () {
  "use strict";
  const form = document.getElementById("vote-form");
  const undo = document.getElementById("undo-form");
  const typing = (event) => /^(TEXTAREA|INPUT)$/.test(event.target.tagName) && event.target.type === "text";
  document.addEventListener("keydown", (event) => {
    if (typing(event)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (undo && (event.key === "z" || event.key === "Z") && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      undo.requestSubmit();
    }
  });
  if (!form) return;
  const started = Date.now();
  let sent = false;
  const answer = document.getElementById("answer");
  form.addEventListener("submit", (event) => {
    if (sent) { event.preventDefault(); return; }
    // An extra label (e.g. unanswerable) replaces whatever was typed.
    if (answer && event.submitter && event.submitter.name === "label") answer.value = "";
    sent = true;
    form.querySelector("input[name=seconds_spent]").value = Math.round((Date.now() - started) / 1000);
  });
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
    if (event.key === "z" || event.key === "Z") return;  // undo, above
    const button = form.querySelector(`button[data-key="${event.key}"]`);
    if (button) { event.preventDefault(); form.requestSubmit(button); return; }
    const flag = form.querySelector(`input[data-key="${event.key.toLowerCase()}"]`);
    if (flag) { event.preventDefault(); flag.checked = !flag.checked; return; }
    if (event.key === "s" || event.key === "S") { event.preventDefault(); document.getElementById("skip-form").requestSubmit(); }
  });
})();
