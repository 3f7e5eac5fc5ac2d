// Live preview: re-render as the fields change, by asking this page
// itself (the server renders with the same functions as /v1 render), and
// swap in the result. Without JavaScript, the Render button does the same.
(function () {
  "use strict";
  var form = document.getElementById("playground");
  var output = document.getElementById("output");
  if (!form || !output || !window.fetch || !window.DOMParser) return;
  var timer = null;
  var latest = 0;
  function refresh() {
    var query = new URLSearchParams(new FormData(form)).toString();
    var url = window.location.pathname + "?" + query;
    var ticket = ++latest;
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (ticket !== latest) return;
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("output");
        if (fresh) {
          output.replaceWith(fresh);
          output = fresh;
          window.history.replaceState(null, "", url);
        }
      })
      .catch(function () { /* keep the last result; Render still works */ });
  }
  form.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(refresh, 400);
  });
})();
