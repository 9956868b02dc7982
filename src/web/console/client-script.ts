/**
 * The console's only script (served as `/<SERVER_PASS>/console.js`, same origin, so the pages' policy can forbid
 * every other script). Everything works without it except what it adds:
 * - live updates: one EventSource per page; on each `change` the page fetches itself again and swaps the parts marked
 *   `data-live` (focus and open disclosures kept). A lost stream says so and reconnects by itself. The stream is
 *   closed on `pagehide` (so pages in the back/forward cache hold no connection) and opened again on `pageshow`.
 * - relative times that count (every `<time>` element), with the absolute time in the reader's zone on hover;
 * - actions (forms marked `data-action`) sent in the background, with the answer shown in the page's notice area;
 *   a delete asks first (`data-confirm`).
 */
export const CONSOLE_SCRIPT = String.raw`"use strict";
(function () {
  var liveEl = document.getElementById("live");
  var source = null;
  var lost = false;
  var refreshing = false;
  var again = false;
  var retryTimer = 0;

  function setLive(state, text) {
    if (!liveEl) return;
    liveEl.className = "live " + state;
    liveEl.textContent = text;
  }

  function open() {
    if (!liveEl || source) return;
    source = new EventSource(liveEl.getAttribute("data-events"));
    source.addEventListener("open", function () {
      setLive("on", lost ? "Reconnected" : "Live");
      if (lost) { lost = false; refresh(); }
    });
    source.addEventListener("change", function () { refresh(); });
    source.addEventListener("error", function () {
      lost = true;
      setLive("lost", "Reconnecting…");
      // The browser retries by itself unless the server answered with an error; then we start again.
      if (source && source.readyState === 2) {
        close();
        clearTimeout(retryTimer);
        retryTimer = setTimeout(open, 3000);
      }
    });
  }

  function close() {
    clearTimeout(retryTimer);
    if (source) { source.close(); source = null; }
  }

  function keyOf(el) {
    var holder = el && el.closest ? el.closest("[data-key]") : null;
    return holder ? holder.getAttribute("data-key") : null;
  }

  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(location.href, { headers: { "x-requested-with": "autoscan-console" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.text() : Promise.reject(new Error(String(res.status))); })
      .then(function (text) { swap(new DOMParser().parseFromString(text, "text/html")); })
      .catch(function () {})
      .then(function () {
        refreshing = false;
        if (again) { again = false; refresh(); }
      });
  }

  function swap(next) {
    var active = document.activeElement;
    var focusKey = keyOf(active);
    var focusName = active && active.getAttribute ? active.getAttribute("data-focus") : null;
    document.querySelectorAll("[data-live]").forEach(function (region) {
      var fresh = next.getElementById(region.id);
      if (!fresh) return;
      var known = {};
      var opened = {};
      region.querySelectorAll("[data-key]").forEach(function (el) { known[el.getAttribute("data-key")] = true; });
      region.querySelectorAll("details[open][data-key]").forEach(function (el) { opened[el.getAttribute("data-key")] = true; });
      region.innerHTML = fresh.innerHTML;
      region.querySelectorAll("li[data-key]").forEach(function (el) {
        if (!known[el.getAttribute("data-key")]) el.classList.add("fresh");
      });
      region.querySelectorAll("details[data-key]").forEach(function (el) {
        if (opened[el.getAttribute("data-key")]) el.open = true;
      });
    });
    if (next.title) document.title = next.title;
    if (focusKey && focusName) {
      var target = document.querySelector('[data-key="' + CSS.escape(focusKey) + '"] [data-focus="' + CSS.escape(focusName) + '"]');
      if (target) target.focus();
    }
    tick();
  }

  function rel(ms) {
    var d = ms - Date.now();
    var a = Math.abs(d);
    if (a < 1000) return d >= 0 ? "now" : "just now";
    var s = Math.floor(a / 1000), text;
    if (s < 60) text = s + " s";
    else if (s < 3600) text = Math.floor(s / 60) + " min" + (s % 60 ? " " + (s % 60) + " s" : "");
    else if (s < 172800) text = Math.floor(s / 3600) + " h" + (Math.floor(s / 60) % 60 ? " " + (Math.floor(s / 60) % 60) + " min" : "");
    else text = Math.floor(s / 86400) + " days";
    return d > 0 ? "in " + text : text + " ago";
  }

  function tick() {
    document.querySelectorAll("time[datetime]").forEach(function (el) {
      var ms = Date.parse(el.getAttribute("datetime"));
      if (isNaN(ms)) return;
      var text = rel(ms);
      if (el.textContent !== text) el.textContent = text;
      if (!el.hasAttribute("data-local")) {
        el.setAttribute("title", new Date(ms).toLocaleString());
        el.setAttribute("data-local", "");
      }
    });
  }

  function notice(kind, title, text) {
    var box = document.getElementById("notice");
    if (!box) return;
    box.innerHTML = "";
    var section = document.createElement("section");
    section.className = "flash " + kind;
    section.setAttribute("role", kind === "err" ? "alert" : "status");
    var h = document.createElement("h2");
    h.textContent = title;
    var p = document.createElement("p");
    p.textContent = text;
    section.appendChild(h);
    section.appendChild(p);
    box.appendChild(section);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form || !form.hasAttribute || !form.hasAttribute("data-action")) return;
    var question = form.getAttribute("data-confirm");
    if (question && !confirm(question)) { event.preventDefault(); return; }
    event.preventDefault();
    var button = form.querySelector("button");
    if (button) button.disabled = true;
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (res) { return res.json(); })
      .then(function (answer) { notice(answer.ok ? "ok" : "err", answer.title, answer.message); })
      .catch(function () { notice("err", "Not done", "autoscan did not answer; check that it is running, then try again."); })
      .then(function () {
        if (button) button.disabled = false;
        refresh();
      });
  });

  window.addEventListener("pagehide", close);
  window.addEventListener("pageshow", function (event) {
    if (!source) open();
    if (event.persisted) refresh();
  });
  open();
  tick();
  setInterval(tick, 1000);
})();
`;
