// A form with data-confirm asks before it submits (no inline handlers: the pages' CSP forbids them).
document.addEventListener("submit", (event) => {
  const message = event.target.dataset && event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
