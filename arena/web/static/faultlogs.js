/* The bot page's log excerpts, for its owner (templates/_fault_logs.html): the key typed into
   the form is kept in this tab's sessionStorage and sent in a header (X-Bot-Key or X-Admin-Key)
   to /api/bots/{bot}/faults, never in an address; each excerpt is shown through textContent
   only. A refused key is forgotten. */
(function () {
  "use strict";
  var box = document.getElementById("fault-logs");
  var form = document.getElementById("logs-form");
  if (!box || !form) return;
  var kind = document.getElementById("logs-kind");
  var input = document.getElementById("logs-key");
  var status = document.getElementById("logs-status");
  var list = document.getElementById("logs-list");
  var HEADERS = { owner: "X-Owner-Key", bot: "X-Bot-Key", admin: "X-Admin-Key" };
  // A bot's token opens that bot only; an owner key every version of its bot (the slot the
  // owner's section, static/owner.js, keeps it in); the admin key every bot, so it is kept once.
  var slots = {
    owner: "arena-owner-key:" + box.dataset.family,
    bot: "arena-bot-key:" + box.dataset.bot,
    admin: "arena-admin-key",
  };

  function stored() {
    for (var k in slots) {
      var key = sessionStorage.getItem(slots[k]);
      if (key) return { kind: k, key: key };
    }
    return null;
  }

  // The owner's section (static/owner.js) shares the owner key's slot: a key forgotten by
  // either says so with this event, and each section then drops what it showed with it.
  function forget() {
    for (var k in slots) sessionStorage.removeItem(slots[k]);
    document.dispatchEvent(new Event("arena-key-forgotten"));
  }

  document.addEventListener("arena-key-forgotten", function () {
    if (stored()) return;  // another key (the bot's token, the admin key) is still kept
    list.textContent = "";
    status.textContent = "The key is forgotten.";
  });

  function element(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function show(data) {
    list.textContent = "";
    var seen = {};
    var shown = 0;
    data.faults.forEach(function (f) {
      var id = f.ladder + "\u0000" + f.index + "\u0000" + f.seat;
      if (seen[id]) {
        seen[id].kinds.textContent += ", " + f.kind;
        return;
      }
      var item = element("div", undefined, "fault-log");
      var head = element("p");
      var link = element("a", f.ladder + " #" + f.index);
      link.href = box.dataset.home + "ladders/" + encodeURIComponent(f.ladder) + "/matches/" + f.index;
      var kinds = element("span", f.kind);
      head.append(link, " seat " + f.seat + ": ", kinds);
      item.append(head);
      if (f.excerpt === null) {
        item.append(element("p", "No log excerpt was kept for this match.", "note"));
      } else {
        item.append(element("pre", f.excerpt || "(the log was empty)", "excerpt"));
        shown += 1;
      }
      seen[id] = { kinds: kinds };
      list.append(item);
    });
    // Each box opens at its end, where the fault is (the last lines before the match ended),
    // not at older lines of the bot's earlier matches.
    list.querySelectorAll("pre.excerpt").forEach(function (pre) { pre.scrollTop = pre.scrollHeight; });
    status.textContent = data.faults.length
      ? shown + " log excerpt" + (shown === 1 ? "" : "s") + " of the bot's recent faulted matches."
      : "No faults: no log excerpts.";
  }

  function load(choice) {
    var headers = {};
    headers[HEADERS[choice.kind]] = choice.key;
    status.textContent = "Loading…";
    fetch(box.dataset.api, { headers: headers, cache: "no-store" })
      .then(function (r) {
        return r.json().then(function (body) {
          if (r.ok) {
            show(body);
            return;
          }
          if (r.status === 401 || r.status === 403) forget();
          list.textContent = "";
          status.textContent = (body.error && body.error.message) || "the server refused (" + r.status + ")";
        });
      })
      .catch(function (err) {
        status.textContent = "Could not reach the server: " + err;
      });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var choice = { kind: kind.value, key: input.value.trim() };
    if (!choice.key) return;
    forget();
    sessionStorage.setItem(slots[choice.kind], choice.key);
    input.value = "";
    load(choice);
  });

  document.getElementById("logs-forget").addEventListener("click", function () {
    forget();
    list.textContent = "";
    status.textContent = "The key is forgotten.";
  });

  // The owner's section (static/owner.js) is the one form of the owner key where it is
  // served: it says when it was given.
  document.addEventListener("arena-key-given", function () {
    var given = stored();
    if (given) load(given);
  });

  var saved = stored();
  if (saved) {
    kind.value = saved.kind;
    load(saved);
  }
})();
