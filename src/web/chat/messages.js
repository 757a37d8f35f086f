// The conversation as a list: each message once (the POST answer and the stream carry the same id),
// in id order, translated for the customer with the original at hand, voice messages playable.
import { languageName } from '/page-i18n/catalogue.js';

export const formatDuration = (seconds) => {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

const validDate = (iso) => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
};

function el(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined && text !== null) element.textContent = text;
  return element;
}

/**
 * `list` is the `<ol>`, `scroller` the element that scrolls it; `page` gives the words (`t`, `lang`),
 * the agent's name, the customer's language and `fetchAudio(messageId)` (a Response, with the key).
 */
export function conversation(list, scroller, page) {
  const shown = new Map(); // message id -> <li>
  let maxId = 0;
  let audioObserver = null;

  const time = (date, options) => date.toLocaleString(page.words().lang, options);
  const nearBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
  const scrollToBottom = () => {
    scroller.scrollTop = scroller.scrollHeight;
  };

  function add(messages, forceScroll) {
    if (!Array.isArray(messages)) return;
    const stick = forceScroll || nearBottom();
    let added = false;
    for (const message of messages) if (addOne(message)) added = true;
    if (added && stick) scrollToBottom();
  }

  function addOne(message) {
    if (!message || typeof message.id !== 'number' || shown.has(message.id)) return false;
    const item = render(message);
    shown.set(message.id, item);
    // Messages arrive almost always in order; keep the list sorted by id anyway.
    let node = list.lastElementChild;
    while (node && Number(node.dataset.messageId) > message.id) node = node.previousElementSibling;
    if (node) node.after(item);
    else list.prepend(item);
    maxId = Math.max(maxId, message.id);
    return true;
  }

  function render(message) {
    const { t } = page.words();
    const mine = message.sender === 'customer';
    const item = el('li', `message ${mine ? 'from-customer' : 'from-agent'}`);
    Object.assign(item.dataset, { testid: 'message', messageId: String(message.id), sender: message.sender || '', kind: message.kind || 'text' });
    const bubble = el('div', 'bubble');
    const author = mine ? t('chat.you') : message.author_name || page.agentName();
    const authorLine = el('p', 'author', author);
    // The agent's name is the agent's own text, in no language of the page.
    if (!mine) authorLine.dir = 'auto';
    bubble.append(authorLine);
    if (message.kind === 'voice') bubble.append(renderVoice(message, author));

    const own = typeof message.customer_text === 'string' && message.customer_text !== '' ? message.customer_text : message.text || '';
    const text = el('p', 'text', own);
    text.dataset.testid = 'message-text';
    text.dir = 'auto';
    const lang = mine ? message.language : page.customerLanguage();
    if (lang) text.lang = lang;
    bubble.append(text);

    if (typeof message.text === 'string' && message.text !== '' && message.text !== own) {
      const details = el('details', 'original');
      const summary = el('summary', null, message.language
        ? t('chat.showOriginalIn', { language: languageName(message.language, page.words().lang) })
        : t('chat.showOriginal'));
      const original = el('p', null, message.text);
      original.dataset.testid = 'message-original';
      original.dir = 'auto';
      if (message.language) original.lang = message.language;
      details.append(summary, original);
      bubble.append(details);
    }

    const meta = el('p', 'meta');
    const sent = validDate(message.created_at);
    if (sent) {
      const stamp = el('time', null, time(sent, { hour: '2-digit', minute: '2-digit' }));
      stamp.dateTime = message.created_at;
      stamp.title = time(sent, { dateStyle: 'medium', timeStyle: 'short' });
      meta.append(stamp);
    }
    bubble.append(meta);
    item.append(bubble);
    return item;
  }

  function renderVoice(message, author) {
    const { t } = page.words();
    const box = el('div', 'voice');
    const duration = typeof message.duration_seconds === 'number' ? ` · ${formatDuration(message.duration_seconds)}` : '';
    box.append(el('span', 'voice-label', t('chat.voice') + duration));
    if (message.audio_url === null) {
      box.append(el('span', 'voice-missing', t('chat.voiceGone')));
      return box;
    }
    const audio = document.createElement('audio');
    audio.controls = true;
    audio.preload = 'metadata';
    audio.dataset.testid = 'audio-player';
    audio.dataset.messageId = String(message.id);
    audio.setAttribute('aria-label', t('chat.voiceFrom', { name: author }));
    box.append(audio);
    watchAudio(audio);
    return box;
  }

  // Recordings are fetched with the key (an <audio src> cannot send headers) when they come into view.
  function watchAudio(audio) {
    if (!('IntersectionObserver' in window)) return void loadAudio(audio);
    audioObserver ??= new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        audioObserver.unobserve(entry.target);
        void loadAudio(entry.target);
      }
    }, { root: scroller, rootMargin: '400px 0px' });
    audioObserver.observe(audio);
  }

  async function loadAudio(audio) {
    if (audio.dataset.state) return;
    audio.dataset.state = 'loading';
    try {
      const response = await page.fetchAudio(audio.dataset.messageId);
      if (!response) return; // the link was refused: the page shows that
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const blob = await response.blob();
      fixUnknownDuration(audio);
      audio.src = URL.createObjectURL(blob);
      audio.dataset.state = 'ready';
    } catch {
      audio.dataset.state = 'failed';
      audio.replaceWith(el('span', 'voice-missing', page.words().t('chat.voiceFailed')));
    }
  }

  function clear() {
    list.textContent = '';
    shown.clear();
  }

  return { add, clear, scrollToBottom, nearBottom, maxId: () => maxId, count: () => shown.size };
}

// Browser recordings (WebM from MediaRecorder) carry no duration: seek far ahead once so the player
// learns it, then go back to the start.
function fixUnknownDuration(audio) {
  audio.addEventListener('loadedmetadata', () => {
    if (audio.duration !== Infinity) return;
    audio.addEventListener('durationchange', function back() {
      if (audio.duration === Infinity) return;
      audio.removeEventListener('durationchange', back);
      audio.currentTime = 0;
    });
    audio.currentTime = 1e101;
  }, { once: true });
}
