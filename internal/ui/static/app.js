// pactum dashboard: the bearer token (auth: bearer), live task rows
// (server-sent events read with fetch, so the token travels in the
// Authorization header), and the cancel and retry buttons. No framework,
// nothing from another origin.
(function () {
  'use strict';
  var KEY = 'pactum.token';
  var auth = document.body.dataset.auth === 'bearer';

  function token() { return sessionStorage.getItem(KEY) || ''; }

  function headers(extra) {
    var h = extra || {};
    if (auth && token()) h['Authorization'] = 'Bearer ' + token();
    return h;
  }

  // With auth: bearer the page arrives as a shell; its content is fetched
  // with the token.
  function loadFragment() {
    var main = document.getElementById('main');
    var form = document.getElementById('tokenform');
    if (!token()) { form.hidden = false; main.hidden = true; return; }
    fetch(location.pathname + location.search, { headers: headers({ 'X-Pactum-Fragment': '1' }), credentials: 'omit' })
      .then(function (res) {
        return res.text().then(function (body) {
          if (res.status === 401) {
            sessionStorage.removeItem(KEY);
            form.hidden = false; main.hidden = true;
            var e = document.getElementById('tokenerror');
            e.textContent = 'The token was refused: ' + body; e.hidden = false;
            return;
          }
          form.hidden = true; main.hidden = false;
          if (!res.ok) { main.textContent = res.status + ': ' + body; return; }
          main.innerHTML = body;
          init();
        });
      })
      .catch(function (err) { main.textContent = 'Could not load: ' + err; });
  }

  function setupAuth() {
    var out = document.getElementById('signout');
    if (out) out.addEventListener('click', function () { sessionStorage.removeItem(KEY); location.reload(); });
    var form = document.getElementById('tokenform');
    if (!form) return;
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      sessionStorage.setItem(KEY, document.getElementById('token').value.trim());
      loadFragment();
    });
    loadFragment();
  }

  // Live rows. The stream sends "row" (a rendered <tr> for a task that
  // passes the page's filter), "gone" (a task that left it) and "resync"
  // (events were missed: read the page again).
  function live(table) {
    var url = table.dataset.events;
    var tbody = table.tBodies[0];
    var status = document.getElementById('livestatus');
    function apply(event, data) {
      var msg = JSON.parse(data);
      if (event === 'resync') { location.reload(); return; }
      var old = tbody.querySelector('tr[data-id="' + CSS.escape(msg.id) + '"]');
      if (event === 'gone') { if (old) old.remove(); return; }
      if (event !== 'row') return;
      var tmp = document.createElement('tbody');
      tmp.innerHTML = msg.html;
      var row = tmp.firstElementChild;
      if (!row) return;
      if (old) { old.replaceWith(row); return; }
      var empty = tbody.querySelector('tr.empty');
      if (empty) empty.remove();
      tbody.insertBefore(row, tbody.firstChild);
    }
    function connect() {
      fetch(url, { headers: headers({ 'Accept': 'text/event-stream' }), credentials: 'omit' }).then(function (res) {
        if (!res.ok || !res.body) throw new Error('status ' + res.status);
        table.dataset.live = 'open';
        var reader = res.body.getReader();
        var dec = new TextDecoder();
        var buf = '';
        function pump() {
          return reader.read().then(function (r) {
            if (r.done) throw new Error('stream ended');
            buf += dec.decode(r.value, { stream: true });
            var i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              var block = buf.slice(0, i); buf = buf.slice(i + 2);
              var event = 'message', data = [];
              block.split('\n').forEach(function (line) {
                if (line.indexOf('event: ') === 0) event = line.slice(7);
                else if (line.indexOf('data: ') === 0) data.push(line.slice(6));
              });
              if (data.length) apply(event, data.join('\n'));
            }
            return pump();
          });
        }
        return pump();
      }).catch(function (err) {
        table.dataset.live = 'closed';
        if (status) status.textContent = 'Live updates stopped (' + err.message + '); reloading…';
        setTimeout(function () { location.reload(); }, 3000);
      });
    }
    connect();
  }

  function actions() {
    document.querySelectorAll('button[data-action]').forEach(function (b) {
      b.addEventListener('click', function () {
        var out = document.getElementById('actionresult');
        b.disabled = true;
        fetch('/ui/tasks/' + encodeURIComponent(b.dataset.id) + '/' + b.dataset.action,
          { method: 'POST', headers: headers(), credentials: 'omit' })
          .then(function (res) { return res.text().then(function (t) { return [res, t]; }); })
          .then(function (rt) {
            if (!rt[0].ok) { out.textContent = rt[1]; b.disabled = false; return; }
            out.textContent = 'done: ' + JSON.parse(rt[1]).state;
            setTimeout(function () { auth ? loadFragment() : location.reload(); }, 300);
          });
      });
    });
  }

  function init() {
    actions();
    var t = document.getElementById('tasks');
    if (t && t.dataset.events) live(t);
  }

  if (auth) setupAuth(); else init();
})();
