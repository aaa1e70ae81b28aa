/* nicbench report: find a card, sort a table. Plain JavaScript, nothing from the network;
   without it the page shows everything, unsorted (the finder stays hidden). */
(function () {
  "use strict";
  var finder = document.getElementById("finder");
  var box = document.getElementById("card-filter");
  var count = document.getElementById("card-count");
  var cards = Array.prototype.slice.call(document.querySelectorAll("[data-card]"));
  if (finder && box && cards.length) {
    finder.hidden = false;
    var keys = {};
    cards.forEach(function (el) {
      if (el.hasAttribute("data-key")) { keys[el.getAttribute("data-key")] = true; }
    });
    var apply = function () {
      var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = {};
      cards.forEach(function (el) {
        var text = el.getAttribute("data-card").toLowerCase();
        var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
        el.classList.toggle("filtered-out", !hit);
        if (hit && el.hasAttribute("data-key")) { shown[el.getAttribute("data-key")] = true; }
      });
      count.textContent = words.length ? Object.keys(shown).length + " of " +
        Object.keys(keys).length + " cards match" : "";
    };
    box.addEventListener("input", apply);
    apply();
  }
  var number = function (text) {
    var m = text.replace(/[\s\u00a0]/g, "").match(/^[+\u2212-]?\d+(\.\d+)?/);
    return m ? parseFloat(m[0].replace("\u2212", "-")) : null;
  };
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (table) {
    var body = table.tBodies[0];
    if (!table.tHead || !body || body.rows.length < 2) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.classList.add("sortable");
      th.tabIndex = 0;
      var sort = function () {
        var down = th.getAttribute("aria-sort") === "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
          h.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
        var rows = Array.prototype.slice.call(body.rows);
        var key = function (r) {
          var cell = r.cells[col];
          return cell ? cell.textContent.trim() : "";
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), nx = number(x), ny = number(y), d;
          if (nx !== null && ny !== null) { d = nx - ny; }
          else if (nx !== null || ny !== null) { d = nx === null ? 1 : -1; return d; }
          else { d = x.localeCompare(y); }
          return down ? -d : d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  });
}());
