// The fleet view, live: every few seconds, read the view alone (its
// address is the section's data-refresh) and swap it in. Without
// JavaScript, the page shows the view as it was when loaded.
(function () {
  "use strict";
  var section = document.getElementById("fleet");
  if (!section || !window.fetch || !window.DOMParser) return;
  var url = section.getAttribute("data-refresh");
  var busy = false;
  function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("fleet");
        if (fresh) {
          section.replaceWith(fresh);
          section = fresh;
        }
      })
      .catch(function () { /* keep the last view; the next try may work */ })
      .then(function () { busy = false; });
  }
  setInterval(refresh, 2000);
})();
