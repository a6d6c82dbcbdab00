// The perturbation editor: live word diff, edit-ratio meter, keyboard, autosave, submit.
// The server re-checks everything; this file only helps the expert see what they did.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("editor-config").textContent);
  const form = document.getElementById("editor");
  const statusLine = document.getElementById("save-status");
  const errorBox = document.getElementById("editor-error");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  const WORD = /[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu;
  // A line break in a text field (IMDb's `<br /><br />`): the server's pattern, one piece of a
  // diff, shown as a break as the pages show it (annotation/text/fields.py, docs/task-types.md).
  const LINE_BREAK = new RegExp(config.lineBreak, "i");
  const PIECE = new RegExp(`${config.lineBreak}|\\s+|[\\p{L}\\p{N}_]+|[^\\p{L}\\p{N}_\\s]`, "giu");
  const tokens = (text) => text.match(WORD) || [];
  const pieces = (text) => text.match(PIECE) || [];

  function trim(a, b) {
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    let endA = a.length, endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
    return [start, endA, endB];
  }

  function levenshtein(a, b) {
    const [start, endA, endB] = trim(a, b);
    a = a.slice(start, endA); b = b.slice(start, endB);
    let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const current = [i];
      for (let j = 1; j <= b.length; j++) {
        current[j] = Math.min(previous[j] + 1, current[j - 1] + 1,
                              previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      previous = current;
    }
    return previous[b.length];
  }

  // Word diff as [op, text] pairs, with op in "equal", "insert", "delete".
  function diff(before, after) {
    const a = pieces(before), b = pieces(after);
    const [start, endA, endB] = trim(a, b);
    const out = [];
    const push = (op, text) => { if (text) out.push([op, text]); };
    push("equal", a.slice(0, start).join(""));
    const midA = a.slice(start, endA), midB = b.slice(start, endB);
    if (midA.length * midB.length > 4e6) {
      push("delete", midA.join("")); push("insert", midB.join(""));
    } else {
      const n = midA.length, m = midB.length;
      const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
      for (let i = n - 1; i >= 0; i--)
        for (let j = m - 1; j >= 0; j--)
          lcs[i][j] = midA[i] === midB[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      let i = 0, j = 0;
      while (i < n || j < m) {
        if (i < n && j < m && midA[i] === midB[j]) { push("equal", midA[i]); i++; j++; }
        else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { push("delete", midA[i]); i++; }
        else { push("insert", midB[j]); j++; }
      }
    }
    push("equal", a.slice(endA).join(""));
    // Merge neighbours with the same op so highlights read as phrases.
    return out.reduce((acc, [op, text]) => {
      const last = acc[acc.length - 1];
      if (last && last[0] === op) last[1] += text; else acc.push([op, text]);
      return acc;
    }, []);
  }

  // A part of a diff as text and line breaks; an inserted or deleted break also shows a ↵.
  function shownText(text, marked) {
    const nodes = [];
    text.split(LINE_BREAK).forEach((part, i) => {
      if (i) {
        if (marked) nodes.push(document.createTextNode("↵"));
        nodes.push(document.createElement("br"));
      }
      if (part) nodes.push(document.createTextNode(part));
    });
    return nodes;
  }

  function renderDiff(target, ops) {
    target.replaceChildren(...ops.flatMap(([op, text]) => {
      if (op === "equal") return shownText(text, false);
      const el = document.createElement(op === "insert" ? "ins" : "del");
      el.append(...shownText(text, true));
      return [el];
    }));
  }

  // A field of kind html or image_url shows the edit as the pages will (docs/task-types.md):
  // HTML rebuilt from the allowed elements only, with text nodes and colour styles; an image
  // from an https address. The allow-list is the server's sanitiser's, sent with the page; the
  // server sanitises again wherever the value is shown.
  const ALLOWED = new Set(config.htmlTags);
  const STYLES = config.htmlStyles;

  function rebuilt(node) {
    if (node.nodeType === Node.TEXT_NODE) return [document.createTextNode(node.textContent)];
    if (node.nodeType !== Node.ELEMENT_NODE || ["SCRIPT", "STYLE"].includes(node.tagName)) return [];
    const children = Array.from(node.childNodes).flatMap(rebuilt);
    if (!ALLOWED.has(node.tagName)) return children;
    const el = document.createElement(node.tagName);
    if (node.tagName === "SPAN") {
      STYLES.forEach((name) => {
        const value = node.style.getPropertyValue(name);
        if (value) el.style.setProperty(name, value);
      });
    }
    el.append(...children);
    return [el];
  }

  function renderPreview(target, kind, value) {
    if (kind === "html") {
      const parsed = new DOMParser().parseFromString(value, "text/html");
      target.replaceChildren(...Array.from(parsed.body.childNodes).flatMap(rebuilt));
    } else if (value.startsWith("https://")) {
      const img = document.createElement("img");
      img.src = value;
      img.alt = "(the image did not load)";
      target.replaceChildren(img);
    } else {
      target.textContent = "An image is shown only from an https address.";
    }
  }

  const editors = Array.from(form.querySelectorAll("textarea[data-field]"));
  const meter = document.getElementById("edit-meter");
  const meterBar = meter.querySelector("span");
  const meterText = document.getElementById("edit-ratio");

  function refresh() {
    let changed = 0, longest = 0;
    for (const area of editors) {
      const name = area.dataset.field;
      const before = config.pivotFields[name];
      renderDiff(document.getElementById(`diff-${name}`), diff(before, area.value));
      const preview = document.getElementById(`preview-${name}`);
      if (preview) renderPreview(preview, preview.dataset.kind, area.value);
      const a = tokens(before), b = tokens(area.value);
      changed += levenshtein(a, b);
      longest += Math.max(a.length, b.length);
    }
    const ratio = longest ? changed / longest : 0;
    meterText.textContent = `${Math.round(ratio * 100)}% of tokens changed (limit ${Math.round(config.maxEditRatio * 100)}%)`;
    meterBar.style.width = `${Math.min(100, ratio * 100)}%`;
    meter.classList.toggle("over", ratio > config.maxEditRatio);
  }

  // Active time: seconds with the page visible and input in the last minute.
  let active = config.secondsSoFar, lastActivity = Date.now();
  ["keydown", "input", "mousemove", "click"].forEach((type) =>
    document.addEventListener(type, () => { lastActivity = Date.now(); }, { passive: true }));
  setInterval(() => {
    if (document.visibilityState === "visible" && Date.now() - lastActivity < 60000) active++;
  }, 1000);

  function payload(submit) {
    const fields = {};
    editors.forEach((area) => { fields[area.dataset.field] = area.value; });
    const label = form.querySelector("input[name=label]:checked");
    const answers = form.querySelector("textarea[name=answers]");
    return {
      pivot: config.pivot,
      fields,
      // One answer per line; " | " separates the spans of a multi-span answer.
      ...(answers ? { answers: answers.value.split("\n").filter((line) => line.trim())
                        .map((line) => (line.includes(" | ") ? line.split(" | ") : line)) }
                  : { label: label ? label.value : "" }),
      tags: Array.from(form.querySelectorAll("input[name=tags]:checked")).map((box) => box.value),
      rationale: form.querySelector("textarea[name=rationale]").value,
      seconds_spent: active,
      submit,
    };
  }

  let draftId = config.draftId, saving = null, dirty = false;

  async function send(submit) {
    const url = draftId ? config.detailUrl.replace("/0/", `/${draftId}/`) : config.createUrl;
    const response = await fetch(url, {
      method: draftId ? "PATCH" : "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      credentials: "same-origin",
      body: JSON.stringify(payload(submit)),
    });
    const body = await response.json().catch(() => ({ detail: `Server error ${response.status}` }));
    if (response.ok && body.id) draftId = body.id;
    if (!response.ok && body.draft) draftId = body.draft;  // refused, but the draft was kept
    return { ok: response.ok, body };
  }

  function showError(body) {
    const message = body.detail || Object.entries(body).map(([k, v]) => `${k}: ${v}`).join("; ");
    errorBox.textContent = message;
    errorBox.hidden = false;
    form.querySelectorAll(".field-error").forEach((el) => el.classList.remove("field-error"));
    const target = body.field && form.querySelector(`[data-error-for="${body.field}"]`);
    if (target) target.classList.add("field-error");
  }

  async function save() {
    if (saving) return saving;
    dirty = false;
    statusLine.textContent = "Saving…";
    saving = send(false).then(({ ok, body }) => {
      statusLine.textContent = ok ? `Draft saved at ${new Date().toLocaleTimeString()}` : "Not saved";
      if (!ok) showError(body);
    }).catch(() => { statusLine.textContent = "Not saved: the server is unreachable"; dirty = true; })
      .finally(() => { saving = null; });
    return saving;
  }

  let timer = null;
  function changed() {
    dirty = true;
    statusLine.textContent = "Unsaved changes";
    clearTimeout(timer);
    timer = setTimeout(save, 1500);
  }

  // Adding a tag leaves the page: the draft is saved first, and the page comes back to it.
  const addTag = document.getElementById("add-tag");
  if (addTag) {
    addTag.addEventListener("submit", async (event) => {
      event.preventDefault();
      await save();
      if (draftId) addTag.elements.next.value = config.draftEditUrl.replace("/0/", `/${draftId}/`);
      addTag.submit();
    });
  }

  function nextPivot(submitted) {
    // Claiming is a POST: the sampler claims an unused pivot of the same split.
    const next = document.createElement("form");
    next.method = "post";
    next.action = config.nextUrl;
    const fields = { csrfmiddlewaretoken: form.querySelector("input[name=csrfmiddlewaretoken]").value,
      split: config.split, strategy: "random", submitted };
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement("input");
      input.type = "hidden"; input.name = name; input.value = value;
      next.appendChild(input);
    }
    document.body.appendChild(next);
    next.submit();
  }

  async function submit(andNext = true) {
    clearTimeout(timer);
    if (saving) await saving;
    statusLine.textContent = "Submitting…";
    const { ok, body } = await send(true).catch(() => ({ ok: false, body: { detail: "The server is unreachable; your text is still here." } }));
    if (ok) {
      dirty = false;
      if (andNext) nextPivot(body.id);
      else window.location.href = `${config.myWorkUrl}?submitted=${body.id}`;
    } else {
      statusLine.textContent = "Not submitted";
      showError(body);
    }
  }

  editors.forEach((area) => area.addEventListener("input", () => { refresh(); changed(); }));
  form.addEventListener("change", (event) => { if (event.target.name !== "label-key") changed(); });
  form.querySelector("textarea[name=rationale]").addEventListener("input", changed);
  form.querySelector("textarea[name=answers]")?.addEventListener("input", changed);
  form.addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  document.getElementById("save-draft").addEventListener("click", () => save());
  document.getElementById("submit-and-stop").addEventListener("click", () => submit(false));
  const tagBoxes = Array.from(form.querySelectorAll("input[name=tags]"));
  const originalAnswer = document.getElementById("original-answers");
  if (originalAnswer) {  // an original waiting for its answer: that comes first
    originalAnswer.focus();
  } else if (editors.length) {  // the edit box has the focus on load, the cursor at its end
    editors[0].focus();
    editors[0].setSelectionRange(editors[0].value.length, editors[0].value.length);
  }

  // Any number of tags: typing filters them, Enter toggles the first one shown.
  const tagFilter = document.getElementById("tag-filter");
  const tagRows = Array.from(form.querySelectorAll(".tag-choice"));
  const shownTags = () => tagRows.filter((row) => !row.hidden);
  tagFilter?.addEventListener("input", () => {
    const words = tagFilter.value.toLowerCase().split(/\s+/).filter(Boolean);
    tagRows.forEach((row) => { row.hidden = !words.every((w) => row.dataset.tag.includes(w)); });
  });
  tagFilter?.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const box = shownTags()[0]?.querySelector("input");
    if (!box) return;
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    tagFilter.value = "";
    tagFilter.dispatchEvent(new Event("input"));
  });

  const labels = Array.from(form.querySelectorAll("input[name=label]"));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest && event.target.closest("#comments")) return; // the thread's own keys
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      submit();
      return;
    }
    const typing = /^(TEXTAREA|INPUT|SELECT)$/.test(document.activeElement.tagName) &&
      !["radio", "checkbox"].includes(document.activeElement.type);
    if (typing && event.key === "Escape") { document.activeElement.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/" && tagFilter) { event.preventDefault(); tagFilter.focus(); return; }
    const tag = tagBoxes.find((box) => box.dataset.key === event.key);
    if (tag) {
      tag.checked = !tag.checked;
      tag.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    const n = Number(event.key);
    if (n >= 1 && n <= labels.length) {
      labels[n - 1].checked = true;
      labels[n - 1].dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
  window.addEventListener("beforeunload", (event) => { if (dirty) event.preventDefault(); });
  refresh();
})();
