// Tether UI: what needs the browser. Every page works without this script;
// it adds two things (docs/ui.md):
//
// - Auto-refresh. A page with #refresh-ctl (a running workflow, the first
//   page of the list) fetches itself again every data-refresh milliseconds
//   and swaps in its elements marked data-live, keeping the open state of
//   their <details> and leaving the forms alone. When the fresh page has no
//   #refresh-ctl (the workflow closed), the whole of <main> is swapped and
//   the refreshing stops. The toggle pauses it (remembered by the browser,
//   localStorage "tether.autoRefresh"); a hidden tab does not refresh.
// - Codec decoding. With <meta name="tether-codec-endpoint">, payloads shown
//   in elements marked data-payload that a codec encoded (the envelope
//   {"_tether_payload":{"metadata":…,"data":…}}) are POSTed, all of a page
//   in one request, to the codec server's /decode (Temporal's codec-server
//   protocol, X-Namespace naming the namespace) and shown decoded. The
//   server never sees them decoded.
(function () {
  'use strict';

  var KEY = 'tether.autoRefresh';
  var ENVELOPE = '_tether_payload';

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') : '';
  }

  var codec = meta('tether-codec-endpoint');
  var ns = meta('tether-namespace');
  // decoded maps an envelope's text to its decoded text, so that a
  // refreshed page does not ask the codec server again.
  var decoded = new Map();

  function bytes(b64) {
    var bin = atob(b64 || '');
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  function utf8(b64) {
    return new TextDecoder().decode(bytes(b64));
  }

  // shown is the text of a decoded payload p for the element el: its JSON
  // value indented, a string as it is when el has data-payload="text".
  function shown(el, p) {
    var md = (p && p.metadata) || {};
    var enc = md.encoding ? utf8(md.encoding) : '';
    if (enc === 'binary/null') return 'null';
    if (enc !== 'json/plain') {
      return '(' + (enc || 'no encoding') + ', ' + bytes(p.data).length + ' bytes)';
    }
    var v = JSON.parse(utf8(p.data));
    if (el.getAttribute('data-payload') === 'text' && typeof v === 'string') return v;
    return JSON.stringify(v, null, 2);
  }

  function mark(el, text) {
    el.textContent = text;
    el.setAttribute('data-decoded', '');
    el.title = 'Decoded by the codec server ' + codec;
  }

  function codecFailed(err) {
    var p = document.getElementById('codec-error');
    if (!p) return;
    p.className = 'error';
    p.textContent = 'The codec server ' + codec + ' did not decode the payloads: ' + err.message;
    p.hidden = false;
  }

  // decode decodes the encoded payloads under root through the codec
  // server.
  function decode(root) {
    if (!codec) return;
    var els = root.querySelectorAll('[data-payload]:not([data-decoded])');
    var todo = [];
    var payloads = [];
    els.forEach(function (el) {
      var raw = el.textContent.trim();
      var env;
      try {
        env = JSON.parse(raw);
      } catch (e) {
        return;
      }
      if (!env || typeof env !== 'object' || Array.isArray(env) || Object.keys(env).length !== 1 || !env[ENVELOPE]) return;
      if (decoded.has(raw)) {
        mark(el, decoded.get(raw));
        return;
      }
      todo.push({ el: el, raw: raw });
      payloads.push(env[ENVELOPE]);
    });
    if (!payloads.length) return;
    fetch(codec + '/decode', {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': ns },
      body: JSON.stringify({ payloads: payloads })
    }).then(function (r) {
      if (!r.ok) {
        return r.text().then(function (t) {
          throw new Error(r.status + ' ' + t.slice(0, 300));
        });
      }
      return r.json();
    }).then(function (ans) {
      if (!ans || !Array.isArray(ans.payloads) || ans.payloads.length !== todo.length) {
        throw new Error('the answer does not hold ' + todo.length + ' payloads');
      }
      todo.forEach(function (t, i) {
        var text = shown(t.el, ans.payloads[i]);
        decoded.set(t.raw, text);
        mark(t.el, text);
      });
    }).catch(codecFailed);
  }

  function paused() {
    try {
      return localStorage.getItem(KEY) === 'off';
    } catch (e) {
      return false;
    }
  }

  function remember(on) {
    try {
      localStorage.setItem(KEY, on ? 'on' : 'off');
    } catch (e) {
      // A browser without storage: the toggle holds for this page only.
    }
  }

  // keepOpen gives each <details> of fresh the open state of the one of old
  // with the same summary (the first with it to the first, …); a new one
  // keeps its own.
  function keepOpen(old, fresh) {
    var was = new Map();
    function key(d, seen) {
      var s = d.querySelector('summary');
      var k = s ? s.textContent.trim() : '';
      var n = seen.get(k) || 0;
      seen.set(k, n + 1);
      return k + '#' + n;
    }
    var seen = new Map();
    old.querySelectorAll('details').forEach(function (d) {
      was.set(key(d, seen), d.open);
    });
    seen = new Map();
    fresh.querySelectorAll('details').forEach(function (d) {
      var k = key(d, seen);
      if (was.has(k)) d.open = was.get(k);
    });
  }

  function refresh() {
    var ctl = document.getElementById('refresh-ctl');
    if (!ctl) return;
    var box = document.getElementById('auto-refresh');
    var state = document.getElementById('refresh-state');
    var every = parseInt(ctl.getAttribute('data-refresh'), 10) || 2000;
    var timer = null;
    var stopped = false;
    var count = 0;
    // served maps each live element to the HTML the server sent for it
    // (before any decoding).
    var served = new WeakMap();
    document.querySelectorAll('[data-live][id]').forEach(function (el) {
      served.set(el, el.outerHTML);
    });
    ctl.hidden = false;
    box.checked = !paused();

    function say(text, st) {
      state.textContent = text;
      ctl.setAttribute('data-state', st);
    }

    function schedule() {
      clearTimeout(timer);
      timer = null;
      if (stopped) return;
      if (!box.checked) {
        say('paused', 'paused');
        return;
      }
      if (document.hidden) {
        say('paused while the tab is hidden', 'hidden');
        return;
      }
      if (ctl.getAttribute('data-state') !== 'failed') say('every ' + every / 1000 + ' s', 'on');
      timer = setTimeout(tick, every);
    }

    function swap(doc) {
      if (!doc.getElementById('refresh-ctl')) {
        // Closed: the whole page as it is now, and no more refreshing.
        var main = document.querySelector('main');
        var fresh = document.importNode(doc.querySelector('main'), true);
        keepOpen(main, fresh);
        main.replaceWith(fresh);
        stopped = true;
        decode(fresh);
        return;
      }
      document.querySelectorAll('[data-live][id]').forEach(function (old) {
        var f = doc.getElementById(old.id);
        if (!f) return;
        // An element the server renders as before stays as it is.
        var html = f.outerHTML;
        if (served.get(old) === html) return;
        f = document.importNode(f, true);
        served.set(f, html);
        keepOpen(old, f);
        old.replaceWith(f);
        decode(f);
      });
    }

    function tick() {
      timer = null;
      fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } })
        .then(function (r) {
          return r.text().then(function (text) {
            if (!r.ok) throw new Error('the page answered ' + r.status);
            swap(new DOMParser().parseFromString(text, 'text/html'));
            count++;
            ctl.setAttribute('data-refreshed', String(count));
            ctl.removeAttribute('data-state');
            schedule();
          });
        })
        .catch(function (err) {
          say('refresh failed: ' + err.message, 'failed');
          schedule();
        });
    }

    box.addEventListener('change', function () {
      remember(box.checked);
      ctl.removeAttribute('data-state');
      schedule();
    });
    document.addEventListener('visibilitychange', schedule);
    schedule();
  }

  function start() {
    refresh();
    decode(document);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
