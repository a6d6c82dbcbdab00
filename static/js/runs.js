// Launching a run: the split list offers only the splits the chosen release holds.
document.querySelectorAll("select[data-release-splits]").forEach((release) => {
  const split = release.form.querySelector("select[name=split]");
  if (!split) return;
  const offer = () => {
    const chosen = release.selectedOptions[0];
    const held = new Set((chosen ? chosen.dataset.splits : "").split(" ").filter(Boolean));
    Array.from(split.options).forEach((option) => {
      option.hidden = option.disabled = !held.has(option.value);
    });
    if (split.selectedOptions[0] && split.selectedOptions[0].disabled) {
      const first = Array.from(split.options).find((option) => !option.disabled);
      if (first) split.value = first.value;
    }
  };
  release.addEventListener("change", offer);
  offer();
});
