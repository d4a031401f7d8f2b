import { type Capture, newCaptureId } from '../../src/store/index.js';

/** A signed delivery of event `eventId`, as the listener stores one: body `{}` unless `extra` says otherwise. */
export function sampleCapture(eventId: string, extra: Partial<Capture> = {}): Capture {
  return {
    id: newCaptureId(),
    receivedAt: new Date().toISOString(),
    source: 'delivery',
    method: 'POST',
    path: '/',
    headers: {},
    body: '{}',
    bodyEncoding: 'utf8',
    bodySize: 2,
    signature: { status: 'valid' },
    envelope: { id: eventId, type: 'punch.created', api_version: '2026-11-01', created: 1 },
    contractProblems: [],
    duplicateOf: null,
    rejected: null,
    ...extra,
  };
}
