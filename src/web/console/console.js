// The console's one script: copy buttons, the webhook form's event choice, and the live view of events.
// Everything else is plain HTML.
'use strict';

// The page's words in the reader's language, written by the server (src/console/layout.ts).
var WORDS = (function () {
  var element = document.getElementById('console-words');
  try { return element ? JSON.parse(element.textContent) : {}; } catch (e) { return {}; }
})();
function word(key, english) { return WORDS['console.script.' + key] || english; }

document.addEventListener('click', function (event) {
  var button = event.target.closest('button[data-copy]');
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent).then(
    function () { button.textContent = word('copied', 'Copied'); },
    function () { button.textContent = word('copyByHand', 'Select it and copy it'); },
  );
});

// Checking an event type in the webhook form means "only the types checked", not "all events".
document.addEventListener('change', function (event) {
  var box = event.target;
  if (box.name !== 'events' || !box.checked || !box.form) return;
  var some = box.form.querySelector('input[name="events_scope"][value="some"]');
  if (some) some.checked = true;
});

(function liveEvents() {
  var list = document.getElementById('events');
  var status = document.getElementById('events-status');
  if (!list || !status) return;
  var KEEP = 200;
  var stream = new EventSource(status.getAttribute('data-stream'));
  stream.onopen = function () { status.textContent = word('live', 'Live: new events appear at the top.'); };
  stream.onerror = function () {
    status.textContent = stream.readyState === EventSource.CLOSED ? word('stopped', 'Stopped: sign in again to follow events.') : word('reconnecting', 'Reconnecting…');
  };
  stream.onmessage = function (message) {
    var event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    var item = document.createElement('li');
    var head = document.createElement('p');
    var type = document.createElement('strong');
    type.className = 'event-type';
    type.textContent = event.type;
    var when = document.createElement('time');
    when.dateTime = event.created_at || '';
    when.textContent = (event.created_at || '').replace('T', ' ').slice(0, 19);
    head.append(type, ' ', when);
    var details = document.createElement('details');
    var summary = document.createElement('summary');
    summary.textContent = event.id || word('details', 'details');
    var body = document.createElement('pre');
    body.textContent = JSON.stringify(event.data, null, 2);
    details.append(summary, body);
    item.append(head, details);
    list.prepend(item);
    while (list.children.length > KEEP) list.lastElementChild.remove();
  };
})();
