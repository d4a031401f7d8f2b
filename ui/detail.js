// The selected capture in detail: the request, the signature, the app's response, the service's attempts, the editor.
import { textExcerpt } from './shared/excerpt.js';
import { verdictOf } from './shared/verdict.js';
import { clear, el, jsonTree } from './render.js';
import { errorText, heldCapture, state, $ } from './state.js';
import { captureLink, loadWholeBody, select, withWholeBody } from './selection.js';
import { captureActions, eventActions } from './actions.js';
import { diffSection } from './diff.js';
import { openTab, tabbed } from './tabs.js';
import { timelineSection } from './timeline.js';
import { attemptsSection, forgetDue } from './attempts.js';
import { storyOf } from './list.js';
import { deliveryStoryOf } from './story.js';

import { editor, keepEditorPlace, parsedBody } from './editor.js';

/**
 * What a repeat of an event means for the app, as clockhook decided it: a duplicate came after the app had
 * taken the event (it must not act twice); a retry came while it had not (it should take this one).
 */
function repeatNote(capture) {
  const story = storyOf(capture.id);
  if (story?.kind === 'duplicate') {
    const who =
      capture.signature.status === 'valid'
        ? 'the service delivered this event before'
        : 'an earlier request carried this event id';
    return el(
      'p',
      { class: 'duplicate-note' },
      `Duplicate: ${who} and the app took it (2xx), in `,
      captureLink(capture.duplicateOf),
      '. Receivers deduplicate on the event id; your app should not act on it twice.',
    );
  }
  if (story?.kind !== 'retry') return null;
  const earlier = capture.repeatOf ?? capture.duplicateOf;
  return el(
    'p',
    { class: 'duplicate-note' },
    `${story.words[0].toUpperCase()}${story.words.slice(1)}: the app did not take the earlier delivery of this event id (no 2xx)`,
    earlier ? [', in ', captureLink(earlier)] : null,
    '. Your app has not acted on this event yet: it should take this one.',
  );
}

/** Says what is shown of a body kept apart until the whole of it is here. */
export function partialBodyNote(capture) {
  const whole = state.wholeBody?.id === capture.id ? state.wholeBody : null;
  if (whole?.error) {
    return el(
      'div',
      {},
      el('div', { class: 'result error', role: 'alert' }, `Could not load the whole body: ${errorText(whole.error)}`),
      el('button', { type: 'button', onclick: () => loadWholeBody(capture.id) }, 'Try again'),
    );
  }
  return el(
    'p',
    { class: 'muted' },
    `Loading the whole body (${capture.bodySize} bytes); showing its first ${capture.body.length} characters.`,
  );
}

export const RAW_PREVIEW = 64 * 1024;

export function bodyText(capture) {
  if (capture.bodyEncoding !== 'base64') return capture.body;
  return `(not UTF-8: ${capture.bodySize} bytes, base64)\n${capture.body}`;
}

/** The raw body, cut at 64 KB until asked: laying out a megabyte on every selection would stall the page. */
export function rawBody(capture) {
  const text = bodyText(capture);
  if (text.length <= RAW_PREVIEW) return el('pre', {}, text);
  const pre = el('pre', {}, text.slice(0, RAW_PREVIEW));
  const more = el('button', { type: 'button' }, `Show all ${text.length} characters`);
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  return el('div', {}, pre, more);
}

/**
 * What the app answered, its status and time as clockhook judged them on every surface (src/shared/verdict.ts);
 * the capture keeps the first 16 KiB of its body.
 */
export function appAnswer(capture) {
  const { forward } = capture;
  const verdict = verdictOf(capture);
  return el(
    'div',
    {},
    keyValueTable([
      ['target', forward.target],
      ['status', verdict.status],
      ['duration', verdict.durationMs === null ? null : `${verdict.durationMs} ms`],
      ['error', forward.error],
    ]),
    // As HTTP has them: headers, then the body. No answer (refused, timed out) has neither.
    forward.statusCode === null
      ? null
      : [
          el('h4', {}, 'Headers'),
          keyValueTable(Object.entries(forward.headers ?? {})),
          el('h4', {}, 'Body'),
          forward.bodyTruncated
            ? el('p', { class: 'muted' }, `The answer was ${forward.bodySize} bytes; clockhook keeps its first 16 KiB.`)
            : null,
          el(
            'pre',
            {},
            forward.bodyEncoding === 'base64' ? `(base64) ${forward.body}` : forward.body || '(empty body)',
          ),
        ],
  );
}

/**
 * For a delivery the app did not take (no 2xx, or no answer at all), what it said, at the top of the
 * detail: what the developer fixing the handler looks for first, and it sits below the request.
 */
export function answerNote(capture) {
  const { forward } = capture;
  if (!forward || deliveryStoryOf(capture)?.outcome !== 'failed') return null;
  // As the terminal says it: an error body's message, an HTML page's title, else its first line.
  const gist = forward.bodyEncoding === 'utf8' ? (textExcerpt(forward.body) ?? '') : '';
  const said =
    forward.statusCode === null
      ? `The app did not answer: ${forward.error}. `
      : forward.cut
        ? `The app's answer (${forward.statusCode}) was cut short: ${forward.error}. `
        : `The app answered ${forward.statusCode} in ${forward.durationMs} ms${gist ? `: ${gist}` : ''}. `;
  const see = el(
    'button',
    {
      type: 'button',
      class: 'link',
      onclick: () => {
        openTab('response');
        requestAnimationFrame(() => requestAnimationFrame(() => $('app-response')?.scrollIntoView({ block: 'start' })));
      },
    },
    'See its response',
  );
  return el('p', { class: 'answer-note' }, el('span', {}, said), see);
}

export function keyValueTable(entries) {
  return el(
    'table',
    {},
    entries.map(([k, v]) =>
      el('tr', {}, el('th', {}, k), el('td', { class: 'mono' }, Array.isArray(v) ? v.join(', ') : String(v ?? '–'))),
    ),
  );
}

export function renderDetail() {
  const pane = $('detail');
  const restoreEditorPlace = keepEditorPlace();
  clear(pane);
  forgetDue();
  const capture = state.selected ? heldCapture(state.selected) : null;
  // On a narrow screen the detail is a view of its own, over the list, while a capture is open.
  document.body.classList.toggle('detail-open', Boolean(capture));
  if (!capture) {
    const missing = state.wanted && state.mode !== null;
    pane.append(
      el(
        'p',
        { class: 'empty' },
        missing
          ? `The page's address names ${state.wanted}, which is not among the captures the page holds: it has left the store, or is older (Load older captures, below the list).`
          : 'Select a capture.',
      ),
    );
    return;
  }
  // What needs the whole body waits for it when the listener kept it apart.
  const whole = withWholeBody(capture);
  const result = state.results.get(capture.id);
  // Element.append would print null as "null": only real sections go in.
  const sections = [
    el('button', { type: 'button', class: 'detail-back', onclick: () => select(null) }, '← Back to the list'),
    el(
      'h2',
      {},
      capture.envelope?.type || `${capture.method} ${capture.path}`,
      ' ',
      el('span', { class: 'muted mono' }, capture.envelope?.id ?? ''),
    ),
    el(
      'div',
      { class: 'muted' },
      `${new Date(capture.receivedAt).toLocaleString()} · ${capture.source}`,
      capture.replayOf ? [' of ', captureLink(capture.replayOf)] : null,
      ` · ${capture.method} ${capture.path} · ${capture.bodySize} bytes`,
    ),
    answerNote(capture),
    repeatNote(capture),
    captureActions(capture, whole),
    result ? el('div', { class: `result ${result.ok ? 'ok' : 'error'}`, role: 'status' }, result.content) : null,
    state.editing === capture.id && whole ? editor(whole) : null,
    capture.contractProblems.length
      ? el(
          'div',
          {},
          el('h3', {}, 'Contract problems'),
          el(
            'ul',
            {},
            capture.contractProblems.map((p) => el('li', {}, `${p.field}: ${p.message}`)),
          ),
        )
      : null,
    traceLine(capture),
    ...tabbed((tab) => tabContent(tab, capture, whole)),
  ];
  pane.append(...sections.filter(Boolean));
  restoreEditorPlace();
}

/** The delivery's trace (listen --otlp), linked where --trace-url says (Jaeger's page, say); nothing without. */
function traceLine(capture) {
  const id = capture.trace?.traceId;
  if (!id) return null;
  const shown = state.traceUrl
    ? el('a', { href: state.traceUrl.replace('{traceId}', id), target: '_blank', rel: 'noopener' }, id)
    : el('code', {}, id);
  return el('p', { class: 'trace muted' }, 'Trace ', shown);
}

/** What the open tab shows of the capture. */
function tabContent(tab, capture, whole) {
  switch (tab) {
    case 'response':
      return [el('h3', { id: 'app-response' }, "The app's response"), appResponseSection(capture)];
    case 'signature':
      return signatureSection(capture.signature);
    case 'attempts':
      return [
        timelineSection(capture),
        el('h3', {}, "The service's view (delivery_attempts)"),
        eventActions(capture),
        attemptsSection(capture),
      ];
    case 'diff':
      return diffSection(capture);
    default:
      return requestSections(capture, whole);
  }
}

/** The signature's verdict, with its timestamp and age. */
function signatureSection(signature) {
  return [
    el('h3', {}, 'Signature'),
    keyValueTable([
      ['verdict', signature.status],
      ['reason', signature.reason],
      [
        't',
        signature.timestamp === undefined
          ? undefined
          : `${signature.timestamp} (${new Date(signature.timestamp * 1000).toISOString()})`,
      ],
      ['age', signature.ageSeconds === undefined ? '–' : `${signature.ageSeconds} s`],
      ['hint', signature.hint],
    ]),
  ];
}

/** What the sender sent: the envelope, the raw body and the headers. */
export function requestSections(capture, whole) {
  const parsed = whole && parsedBody(whole);
  return [
    el('h3', {}, 'Envelope'),
    whole === null
      ? partialBodyNote(capture)
      : parsed === undefined
        ? el('p', { class: 'muted' }, 'The body is not JSON.')
        : el('div', { class: 'json mono' }, jsonTree(parsed)),
    el('h3', {}, 'Raw body'),
    capture.bodyTruncated
      ? el(
          'p',
          { class: 'muted' },
          `The body was ${capture.bodySize} bytes, over the listener's limit: only its beginning was captured, and the sender was answered 413.`,
        )
      : null,
    rawBody(whole ?? capture),
    el('h3', {}, 'Request headers'),
    keyValueTable(Object.entries(capture.headers)),
  ];
}

/** What the app answered, or why there is no answer. */
export function appResponseSection(capture) {
  const forward = capture.forward;
  if (forward) return appAnswer(capture);
  const why = capture.rejected
    ? `Not forwarded: clockhook answered ${capture.rejected.statusCode} ${capture.rejected.code}.`
    : forward === null
      ? 'Capture-only mode: clockhook answered 200.'
      : 'Waiting for the app…';
  return el('p', { class: 'muted' }, why);
}
