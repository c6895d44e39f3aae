// Optional conveniences: the page is complete without this script.
// Filters hide grid rows: those the edit does not change, or those some case fires.
(function () {
  "use strict";
  var changedOnly = document.getElementById("only-changed");
  var uncoveredOnly = document.getElementById("only-uncovered");
  function apply() {
    var rows = document.querySelectorAll("table.grid tr.row");
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var hide = (changedOnly && changedOnly.checked && !row.classList.contains("changed")) ||
                 (uncoveredOnly && uncoveredOnly.checked && !row.classList.contains("uncovered"));
      row.hidden = hide;
    }
  }
  if (changedOnly) { changedOnly.addEventListener("change", apply); }
  if (uncoveredOnly) { uncoveredOnly.addEventListener("change", apply); }
  apply();
})();
