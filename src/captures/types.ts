// `clockhook types`: the types of each event's `data` as they arrived (the shapes of the captures of each
// type), for the handler. TypeScript declarations (a union discriminated on `type`) or JSON Schema. The
// envelope's fields are the contract's; a type never captured is shaped after the sandbox's sample, said so.
import {
  addToShape,
  emptyShape,
  EVENT_TYPES,
  isKnownEventType,
  isOptional,
  PING_EVENT_TYPE,
  sampleData,
  type Shape,
} from '../contract/index.js';
import { deliveryData } from '../listener/shapes.js';
import type { WithBody } from './whole.js';

/** What one event type's data looks like, and where that comes from. */
export interface TypeSource {
  type: string;
  /** The shape of `data`; null for a ping never captured (the contract does not show its data). */
  shape: Shape | null;
  /** How many captures it was derived from; 0: the sandbox's sample. */
  captures: number;
}

/** Every type the service sends (the 38 of the catalogue, then the ping), shaped from `captures`. */
export function typeSources(captures: readonly WithBody[]): TypeSource[] {
  const seen = new Map<string, TypeSource>();
  for (const { capture, body, missing } of captures) {
    const type = capture.envelope?.type;
    if (!type || !isKnownEventType(type) || missing) continue;
    const delivered = deliveryData(capture, body.toString('utf8'));
    if (!delivered) continue;
    const source = seen.get(type) ?? { type, shape: emptyShape(), captures: 0 };
    addToShape(source.shape as Shape, delivered.data);
    source.captures += 1;
    seen.set(type, source);
  }
  return [...EVENT_TYPES, PING_EVENT_TYPE].map((type) => seen.get(type) ?? sampled(type));
}

function sampled(type: string): TypeSource {
  if (type === PING_EVENT_TYPE) return { type, shape: null, captures: 0 };
  const shape = emptyShape();
  addToShape(shape, sampleData(type));
  return { type, shape, captures: 0 };
}

/** `pto_request.approved` → `PtoRequestApprovedEvent`. */
export function typeName(type: string): string {
  const words = type.split(/[._]/).map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return `${words.join('')}Event`;
}

/** Where a type's shape comes from, for its comment. */
export function provenance(source: TypeSource): string {
  if (source.captures > 0)
    return `from ${source.captures} ${source.captures === 1 ? 'capture' : 'captures'} of ${source.type}`;
  if (!source.shape) return "never captured: the service does not show a ping's data";
  return "never captured: shaped after clockhook's sandbox sample; the service does not document these fields (data is the resource as its API returns it)";
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const INDENT = '  ';

/** A shape as a TypeScript type. */
function tsOf(shape: Shape | null, depth: number): string {
  if (!shape || shape.kinds.size === 0) return 'unknown';
  const kinds = [...shape.kinds].map((kind) => {
    if (kind === 'object') return tsObject(shape, depth);
    if (kind === 'array') {
      const items = tsOf(shape.items, depth);
      return /[|{ ]/.test(items) ? `(${items})[]` : `${items}[]`;
    }
    return kind;
  });
  return kinds.join(' | ');
}

function tsObject(shape: Shape, depth: number): string {
  if (shape.fields.size === 0) return 'Record<string, unknown>';
  const pad = INDENT.repeat(depth + 1);
  const lines = [...shape.fields].map(([name, field]) => {
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    return `${pad}${key}${isOptional(field, shape) ? '?' : ''}: ${tsOf(field, depth + 1)};`;
  });
  return `{\n${lines.join('\n')}\n${INDENT.repeat(depth)}}`;
}

const ENVELOPE_TS = `/** The envelope every delivery carries, as the service documents it. */
export interface Envelope<Type extends string, Data> {
  /** Event id, evt_…: the same across retries and redeliveries; deduplicate on it. */
  id: string;
  object: 'event';
  type: Type;
  /** YYYY-MM-DD label of the payload version: read it on each event, never assume it constant. */
  api_version: string;
  /** When the event happened, in Unix seconds. */
  created: number;
  data: Data;
}`;

/** TypeScript declarations: one type per event type, and WebhookEvent, their union on \`type\`. */
export function typesTs(sources: readonly TypeSource[], header: string): string {
  const types = sources.map(
    (source) =>
      `/** ${source.type}: ${provenance(source)}. */\nexport type ${typeName(source.type)} = Envelope<'${source.type}', ${tsOf(source.shape, 0)}>;`,
  );
  const union = sources.map((source) => `  | ${typeName(source.type)}`).join('\n');
  return `${[
    `// ${header}`,
    ENVELOPE_TS,
    ...types,
    `/** Every delivery the service sends: narrow it with a switch on \`type\`. */\nexport type WebhookEvent =\n${union};`,
  ].join('\n\n')}\n`;
}

/** A shape as JSON Schema (draft-07). */
function schemaOf(shape: Shape | null): Record<string, unknown> {
  if (!shape || shape.kinds.size === 0) return {};
  const schema: Record<string, unknown> = {
    type: shape.kinds.size === 1 ? [...shape.kinds][0] : [...shape.kinds],
  };
  if (shape.kinds.has('object') && shape.fields.size > 0) {
    schema.properties = Object.fromEntries([...shape.fields].map(([name, field]) => [name, schemaOf(field)]));
    const required = [...shape.fields].filter(([, field]) => !isOptional(field, shape)).map(([name]) => name);
    if (required.length > 0) schema.required = required;
  }
  if (shape.kinds.has('array') && shape.items && shape.items.seen > 0) schema.items = schemaOf(shape.items);
  return schema;
}

/** JSON Schema: one definition per event type, and the whole a oneOf over them, told apart by `type`. */
export function typesJsonSchema(sources: readonly TypeSource[], header: string): Record<string, unknown> {
  const definitions = Object.fromEntries(
    sources.map((source) => [
      typeName(source.type),
      {
        description: `${source.type}: ${provenance(source)}.`,
        type: 'object',
        required: ['id', 'object', 'type', 'api_version', 'created', 'data'],
        properties: {
          id: { type: 'string', pattern: '^evt_', description: 'the same across retries: deduplicate on it' },
          object: { const: 'event' },
          type: { const: source.type },
          api_version: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
          created: { type: 'integer', description: 'Unix seconds' },
          data: { type: 'object', ...schemaOf(source.shape) },
        },
      },
    ]),
  );
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'WebhookEvent',
    $comment: header,
    oneOf: sources.map((source) => ({ $ref: `#/definitions/${typeName(source.type)}` })),
    definitions,
  };
}
