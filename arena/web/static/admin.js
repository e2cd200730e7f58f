/* The organiser's view (templates/admin.html): the admin key typed into the form is kept in
   this tab's sessionStorage (the slot the log excerpts' section uses too) and sent in the
   X-Admin-Key header, never in an address; every value is shown through textContent. */
(function () {
  "use strict";
  var box = document.getElementById("admin");
  if (!box) return;
  var SLOT = "arena-admin-key";
  var status = document.getElementById("admin-status");
  var table = document.getElementById("admin-box");
  var body = document.querySelector("#bot-health tbody");

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function link(text, href) {
    var a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    return a;
  }

  function show(bots) {
    body.replaceChildren();
    bots.forEach(function (b) {
      var row = document.createElement("tr");
      row.dataset.bot = b.bot;
      if (b.suspended) row.className = "suspended";
      var name = cell(row, "", "bot-col");
      name.appendChild(link(b.bot, box.dataset.home + "bots/" + encodeURIComponent(b.bot)));
      cell(row, b.suspended ? "suspended: " + (b.suspended_reason || "no reason given") :
        (b.remote ? "active (remote)" : "active"));
      cell(row, String(b.matches), "n");
      cell(row, b.matches ? (100 * b.fault_rate).toFixed(1) + "%" : "–", "n");
      cell(row, String(b.faults), "n");
      cell(row, Object.keys(b.fault_kinds).map(function (k) {
        return k + " " + b.fault_kinds[k];
      }).join(", ") || "–");
      var last = cell(row, b.last_fault ? "" : "–");
      if (b.last_fault) {
        last.appendChild(link(b.last_fault.ladder + " #" + b.last_fault.index,
          box.dataset.home + "ladders/" + encodeURIComponent(b.last_fault.ladder) +
          "/matches/" + b.last_fault.index));
      }
      body.appendChild(row);
    });
    table.hidden = false;
    var suspended = bots.filter(function (b) { return b.suspended; }).length;
    status.textContent = bots.length + " bots, " + suspended + " suspended.";
  }

  function hide(text) {
    body.replaceChildren();
    table.hidden = true;
    status.textContent = text;
  }

  function load(key) {
    status.textContent = "Loading…";
    fetch(box.dataset.api, { headers: { "X-Admin-Key": key }, cache: "no-store" })
      .then(function (r) {
        return r.json().then(function (doc) {
          if (r.ok) return show(doc);
          if (r.status === 401 || r.status === 403) sessionStorage.removeItem(SLOT);
          hide((doc.error && doc.error.message) || "the server refused (" + r.status + ")");
        });
      })
      .catch(function (err) { hide("Could not reach the server: " + err); });
  }

  document.getElementById("admin-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var input = document.getElementById("admin-key");
    var key = input.value.trim();
    if (!key) return;
    sessionStorage.setItem(SLOT, key);
    input.value = "";
    load(key);
  });
  document.getElementById("admin-forget").addEventListener("click", function () {
    sessionStorage.removeItem(SLOT);
    hide("The key is forgotten.");
  });
  var saved = sessionStorage.getItem(SLOT);
  if (saved) load(saved);
})();
