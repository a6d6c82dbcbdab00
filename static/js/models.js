// The Models page shows only the settings of the kind chosen: each setting's paragraph names
// its kinds (data-kinds); one with none applies to every kind. Without script, all show.
(function () {
  const form = document.getElementById("model-form");
  const kind = form && form.querySelector("select[name=kind]");
  if (!kind) return;
  function show() {
    for (const p of form.querySelectorAll("p[data-kinds]")) {
      p.hidden = !p.dataset.kinds.split(" ").includes(kind.value);
    }
  }
  kind.addEventListener("change", show);
  show();
})();
