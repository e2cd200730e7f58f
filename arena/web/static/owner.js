// The owner's view of a bot's page (_owner.html): asks for the owner key, keeps it in this
// tab's sessionStorage only (never in a URL), shows each version's status, verdict and log
// excerpt from the owners' API, uploads a new version and rolls back to an earlier one.
(function () {
  "use strict";
  const section = document.getElementById("owner");
  if (!section) return;
  const api = section.dataset.api;
  const storageKey = "arena-owner-key:" + section.dataset.bot;
  const message = document.getElementById("owner-message");
  const view = document.getElementById("owner-view");
  const forget = document.getElementById("owner-forget");
  let polling = null;

  function key() { return sessionStorage.getItem(storageKey); }
  function say(text) { message.textContent = text; }

  async function call(path, options) {
    const opts = Object.assign({}, options || {});
    opts.headers = Object.assign({ "X-Owner-Key": key() }, opts.headers || {});
    const answer = await fetch(api + path, opts);
    const doc = await answer.json().catch(() => ({}));
    if (!answer.ok) {
      const text = (doc.error && doc.error.message) || answer.statusText;
      if (answer.status === 401) forgetKey();
      throw new Error(text);
    }
    return doc;
  }

  function cell(row, text) {
    const td = document.createElement("td");
    if (text !== undefined) td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function render(doc) {
    const body = document.querySelector("#owner-versions tbody");
    body.replaceChildren();
    let verifying = false;
    for (const v of doc.versions) {
      const row = document.createElement("tr");
      row.dataset.version = v.version;
      cell(row, v.version + " (" + v.bot + ")" + (v.note ? ": " + v.note : ""));
      cell(row, v.status);
      verifying = verifying || v.status === "verifying";
      const verdict = cell(row);
      // A short verdict ("failed: crash"); what it says further, and whom the verification
      // match was against, one click away.
      const said = verdict_parts(v.verdict || (v.submitted ? "waiting" : "not submitted here"));
      const short = document.createElement("strong");
      short.className = "verdict";
      short.textContent = said.short;
      verdict.append(short);
      if (said.rest || v.opponents.length) {
        const why = document.createElement("details");
        why.className = "verdict-detail";
        const summary = document.createElement("summary");
        summary.textContent = "why";
        why.append(summary, said.rest ? said.rest + ". " : "",
          v.opponents.length ? "Its verification match was against " +
            v.opponents.join(" and ") + "." : "");
        verdict.append(" ", why);
      }
      if (v.verification_match) {
        const link = document.createElement("button");
        link.type = "button";
        link.textContent = "its verification match";
        link.addEventListener("click", () => showVerification(v.version, verdict, link));
        verdict.append(" ", link);
      }
      for (const step of v.steps || []) {  // its install or build (docs/submit.md#runtimes)
        const details = document.createElement("details");
        details.className = "step";
        details.open = !step.ok;
        const summary = document.createElement("summary");
        summary.textContent = step.name + (step.command ? " `" + step.command + "`" : "") + ": " +
          (step.ok ? "ok" : "FAILED: " + step.detail) +
          (step.cached ? " (reused)" : " (" + step.seconds.toFixed(1) + " s)");
        const out = document.createElement("pre");
        out.className = "log-excerpt";
        out.textContent = step.output;
        details.append(summary, out);
        verdict.appendChild(details);
      }
      if (v.log_excerpt) {
        const pre = document.createElement("pre");
        pre.className = "log-excerpt";
        pre.textContent = v.log_excerpt;
        verdict.appendChild(pre);
      }
      cell(row, v.ratings.map((r) => r.ladder + ": " + r.mu.toFixed(2) + " ± " +
        r.sigma.toFixed(2) + ", " + r.matches).join("; ") || "in no ladder");
      const action = cell(row);
      if (v.status === "retired") {
        const back = document.createElement("button");
        back.type = "button";
        back.textContent = "Play this version again";
        back.addEventListener("click", () => rollback(v.version));
        action.appendChild(back);
      }
      body.appendChild(row);
    }
    clearTimeout(polling);
    if (verifying) polling = setTimeout(load, 2000);
  }

  // "failed: crash: the bot's process exited ..." -> "failed: crash" and the rest.
  function verdict_parts(text) {
    const parts = text.split(": ");
    if (parts.length <= 2) return { short: text, rest: "" };
    return { short: parts.slice(0, 2).join(": "), rest: parts.slice(2).join(": ") };
  }

  // The verification match read for a person: who sat where, scores and places, each fault,
  // and its replay file to download (`arena replay FILE` re-runs it), not raw JSON.
  async function showVerification(version, where, button) {
    try {
      const doc = await call("/versions/" + version + "/verification");
      const box = document.createElement("div");
      box.className = "verification";
      const list = document.createElement("ul");
      const names = doc.seat_names || [], scores = doc.scores || [], ranks = doc.ranks || [];
      names.forEach((name, seat) => {
        const item = document.createElement("li");
        const place = ranks[seat];
        item.textContent = "seat " + (seat + 1) + ": " + name +
          (scores[seat] !== undefined ? ", score " + scores[seat] : "") +
          (place !== undefined && place !== null ? ", place " + (place + 1) + " of " +
            names.length : "");
        list.appendChild(item);
      });
      for (const f of doc.faults || []) {
        const item = document.createElement("li");
        item.className = "fault";
        item.textContent = (names[f.seat] || "seat " + (f.seat + 1)) + " faulted (" + f.kind + ") " +
          (f.move >= 0 ? "at move " + (f.move + 1) : "before its first move") +
          (f.detail ? ": " + f.detail : "");
        list.appendChild(item);
      }
      const moves = document.createElement("p");
      moves.textContent = (doc.moves || []).length + " moves played. ";
      const file = document.createElement("a");
      file.href = URL.createObjectURL(new Blob([JSON.stringify(doc)], { type: "application/json" }));
      file.download = section.dataset.bot + "-" + version + "-verification.json";
      file.textContent = "Download its replay file";
      moves.append(file, " (arena replay FILE re-runs it)");
      box.append(list, moves);
      button.replaceWith(box);
    } catch (err) { say(err.message); }
  }

  async function rollback(version) {
    try {
      const doc = await call("/rollback", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ version: version }),
      });
      say("version " + doc.version + " plays again");
      load();
    } catch (err) { say(err.message); }
  }

  function show(on) {
    view.hidden = !on;
    forget.hidden = !on;
    if (!on) {  // a forgotten or refused key leaves nothing of the owner's view in the page
      clearTimeout(polling);
      document.querySelector("#owner-versions tbody").replaceChildren();
    }
  }

  async function load() {
    const used = key();
    if (!used) return;
    try {
      const doc = await call("/owner");
      if (key() !== used) return;  // forgotten (or replaced) while it was asked for
      render(doc);
      if (view.hidden) document.dispatchEvent(new Event("arena-key-given"));  // the logs too
      show(true);
    } catch (err) { say(err.message); }
  }

  document.getElementById("owner-key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("owner-key");
    sessionStorage.setItem(storageKey, input.value.trim());
    input.value = "";
    say("");
    load();
  });
  // The log excerpts' section (static/faultlogs.js) shares the key's slot: each tells the
  // other when it forgets it, and each then drops what it showed with it.
  function forgetKey() {
    sessionStorage.removeItem(storageKey);
    show(false);
    document.dispatchEvent(new Event("arena-key-forgotten"));
  }
  document.addEventListener("arena-key-forgotten", () => { if (!key()) show(false); });
  forget.addEventListener("click", () => {
    forgetKey();
    say("the key is forgotten in this tab");
  });
  document.getElementById("upload-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = document.getElementById("upload-file").files[0];
    const note = document.getElementById("upload-note").value.trim();
    if (!file) return;
    say("uploading " + file.name + "…");
    try {
      const doc = await call("/versions" + (note ? "?note=" + encodeURIComponent(note) : ""), {
        method: "POST",
        headers: { "Content-Type": "application/octet-stream" },
        body: file,
      });
      event.target.reset();  // a second click would upload the same file again (refused)
      say("uploaded as version " + doc.version + "; verifying…");
      load();
    } catch (err) { say(err.message); }
  });
  load();
})();
