// The judgement of a capture (CaptureStory, book.ts) as a JSON Schema, written once: the MCP tools derive their
// output schemas from it (a strict client checks every result against them), and --json readers can validate
// against it. The type and this schema are held to each other field by field at compile time (see the check at
// the end), so a field added to the story is in the schema, or the build fails.
import type { CaptureStory } from './book.js';

const TONE = {
  type: 'string',
  enum: ['ok', 'bad', 'warn', 'info', 'plain'],
  description: 'the colour class every surface paints it in: ok green, bad red, warn amber, info cyan, plain grey',
} as const;

const EVENT_STATE = {
  type: 'string',
  enum: ['pending', 'delivered', 'failing', 'given-up', 'disabled', 'missed', 'rejected'],
  description:
    "the event's state: the service's newest delivery held here (and, where asked, the service's attempts), plus what was done here; a local replay never makes a delivered event failing",
} as const;

const EVENT_PROPERTIES = {
  state: EVENT_STATE,
  words: { type: 'string', description: "the event's state in words, with what the service does next" },
  tone: TONE,
  failed: { type: 'boolean', description: 'in the one failed set (failing, given up or disabled)' },
  latest: { type: 'boolean', description: "this capture is the event's newest" },
} as const;

const STORY_PROPERTIES = {
  kind: {
    type: 'string',
    enum: ['first', 'retry', 'duplicate', 'replay', 'edited-replay'],
    description: 'what it was for its event',
  },
  retry: { type: 'number', description: 'for a retry: which one (1 for the first)' },
  words: {
    type: 'string',
    description: 'what it was, in words: "first delivery", "retry 2", "duplicate (the app had taken it)", "replay"',
  },
  outcome: {
    type: 'string',
    enum: ['2xx', 'failed', 'rejected', 'pending'],
    description:
      '2xx: the app took it; failed: it answered otherwise, not at all, or cut its answer short; rejected: clockhook refused it itself (a bad signature); pending: still with the app',
  },
  status: {
    type: 'string',
    description:
      'the status shown on every surface: "200", "500", "200 cut", "no answer" (the sender got clockhook\'s 502 or 504), "…" while pending, a refusal\'s own status',
  },
  tone: TONE,
  durationMs: {
    type: ['number', 'null'],
    description: 'how long the app took, measured once by the forward; null when nothing was forwarded',
  },
  signatureTone: TONE,
  answer: {
    type: ['string', 'null'],
    description:
      "the gist of the app's answer when it did not take it, or the --filter rule that kept it from the app; null otherwise",
  },
  event: {
    type: 'object',
    properties: EVENT_PROPERTIES,
    required: Object.keys(EVENT_PROPERTIES) as (keyof typeof EVENT_PROPERTIES)[],
    additionalProperties: false,
  },
} as const;

/** The JSON Schema of a capture's story (CaptureStory). */
export const CAPTURE_STORY_SCHEMA = {
  type: 'object',
  description: 'what this capture was for its event, the verdict on its answer, and its event state',
  properties: STORY_PROPERTIES,
  required: (Object.keys(STORY_PROPERTIES) as (keyof typeof STORY_PROPERTIES)[]).filter((key) => key !== 'retry'),
  additionalProperties: false,
} as const;

// The schema and the type name the same fields: a field in one and not the other fails typecheck here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameFields: [
  Same<keyof typeof STORY_PROPERTIES, keyof CaptureStory>,
  Same<keyof typeof EVENT_PROPERTIES, keyof CaptureStory['event']>,
] = [true, true];
