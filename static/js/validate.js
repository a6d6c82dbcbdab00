// Validation by keyboard: digits pick a label and submit, letters toggle flags, "s" skips,
// "z" undoes the last vote while its item is open. In free-text projects the answer box has
// the focus: Enter submits the answer, Esc leaves the box for the keys above.
//
// A vote goes to the API, whose answer carries the next item (one round trip, no page load);
// the page swaps the item's text in place. Without JavaScript the forms post as usual.
//
// The page stays true under Back, Forward, a reload and a second tab: the server sends it with
// Cache-Control: no-store, a copy restored from the back-forward cache is asked for again, the
// count shown is the one the server answers with each vote, and a vote the server had already
// taken (from another tab, or a stale page) is said, never counted twice.
(function () {
  "use strict";
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) window.location.reload();  // a copy of the past: ask again
  });
  const NOTICE = "contrastlab-validate-notice";
  const noticeBox = document.getElementById("vote-notice");
  function notice(text) {
    if (!noticeBox) return;
    noticeBox.textContent = text;
    noticeBox.hidden = !text;
  }
  notice(sessionStorage.getItem(NOTICE) || "");  // said before the reload that brought us here
  sessionStorage.removeItem(NOTICE);
  function reloadSaying(text) {
    sessionStorage.setItem(NOTICE, text);
    window.location.reload();
  }
  const form = document.getElementById("vote-form");
  const undo = document.getElementById("undo-form");
  const typing = (event) => /^(TEXTAREA|INPUT)$/.test(event.target.tagName) && event.target.type === "text";
  const at = (element, id) => element.dataset.url.replace("/0/", `/${id}/`);
  document.addEventListener("keydown", (event) => {
    if (typing(event)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (undo && !undo.hidden && (event.key === "z" || event.key === "Z") && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      undo.requestSubmit();
    }
  });
  if (!form) return;
  const answer = document.getElementById("answer");
  const errorBox = document.getElementById("vote-error");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  let started = Date.now();
  let sending = false;
  const REPEAT = "You already voted on this item; your vote was counted once. Here is your next one.";
  const STALE = "Your vote was recorded. This page was out of date (your votes changed in another tab or window meanwhile): here it is afresh.";

  function show(next) {
    form.dataset.item = next.item;
    form.action = at(form, next.item);
    const skip = document.getElementById("skip-form");
    skip.action = at(skip, next.item);
    // fields_html is the server's rendering: escaped text, sanitised HTML or an image.
    form.querySelectorAll(".item-text").forEach((box) => {
      box.innerHTML = next.fields_html[box.dataset.field] ?? "";
    });
    form.querySelectorAll("input[name=flags]").forEach((box) => { box.checked = false; });
    if (answer) { answer.value = ""; answer.focus(); }
    started = Date.now();
  }

  function counted(voted, total) {
    document.getElementById("done-count").textContent = total;
    document.getElementById("done-plural").textContent = total === 1 ? "" : "s";
    const left = document.getElementById("items-left");  // absent under the crowd gates
    if (left) left.textContent = Math.max(0, Number(left.textContent) - 1);
    if (undo) { undo.action = at(undo, voted); undo.hidden = false; }
  }

  async function send(submitter) {
    const voted = form.dataset.item;
    const body = {
      flags: Array.from(form.querySelectorAll("input[name=flags]:checked")).map((box) => box.value),
      seconds_spent: Math.round((Date.now() - started) / 1000),
    };
    if (submitter && submitter.name === "label") body.label = submitter.value;
    else if (answer) body.answer = answer.value;
    const response = await fetch(form.dataset.api.replace("/0/", `/${voted}/`), {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
    const reply = await response.json().catch(() => ({ detail: `Server error ${response.status}` }));
    if (!response.ok) {
      const said = reply.detail || Object.entries(reply).map(([k, v]) => `${k}: ${v}`).join("; ");
      if (response.status === 409) { reloadSaying(said); return; }  // the item moved on: afresh
      // Work ended meanwhile (a paused validator's vote from a stale tab): the page says why,
      // in the words meant for them (a participant is not told to ask an admin).
      if (response.status === 403) { window.location.reload(); return; }
      errorBox.textContent = said;
      errorBox.hidden = false;
      return;
    }
    errorBox.hidden = true;
    // 200: the server had taken this vote before (another tab, a stale page), counted once;
    // a count that moved by more than this vote: another tab voted meanwhile. Either way the
    // page is out of date: fetched afresh, with what happened said.
    if (response.status !== 201) { reloadSaying(REPEAT); return; }
    if (reply.done !== Number(document.getElementById("done-count").textContent) + 1) {
      reloadSaying(STALE);
      return;
    }
    notice("");
    counted(voted, reply.done);
    if (reply.next) show(reply.next);
    else window.location.reload();  // nothing left: the page says so
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (sending) return;
    sending = true;
    send(event.submitter)
      .catch(() => { errorBox.textContent = "The server is unreachable; your vote was not sent."; errorBox.hidden = false; })
      .finally(() => { sending = false; });
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
