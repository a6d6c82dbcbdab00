// New project: the slug follows the name (lower case, dashes) until it is edited by hand.
(() => {
  const name = document.getElementById("id_name");
  const slug = document.getElementById("id_slug");
  if (!name || !slug) return;
  let typed = slug.value !== "";
  const slugify = (text) => text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64);
  slug.addEventListener("input", () => { typed = slug.value !== ""; });
  name.addEventListener("input", () => { if (!typed) slug.value = slugify(name.value); });
})();
