// The published import page: only as many file inputs as the chosen dataset takes (BoolQ one,
// Quoref two, IMDb four); a hidden input is emptied, so that no file of another dataset is
// sent. Without a script all four show, and the import says how many the dataset takes.
(() => {
  const form = document.getElementById("published-form");
  const data = document.getElementById("most-files");
  const dataset = form && form.querySelector('select[name="dataset"]');
  if (!form || !data || !dataset) return;
  const most = JSON.parse(data.textContent || "{}");
  const shown = () => {
    const count = most[dataset.value] || 1;
    form.querySelectorAll("[data-file]").forEach((row) => {
      const off = Number(row.dataset.file) > count;
      row.hidden = off;
      const input = row.querySelector('input[type="file"]');
      if (off && input) input.value = "";
    });
  };
  dataset.addEventListener("change", shown);
  shown();
})();
