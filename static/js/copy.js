// A button beside a read-only field copies its text: set-password links, one by one or all.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelectorAll(button.dataset.copy);
  const text = Array.from(source).map((field) => field.value).join("\n");
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    source[0].select(); document.execCommand("copy");
  }
  const said = button.textContent;
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = said; }, 1500);
});
