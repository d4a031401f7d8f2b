// The service's delivery attempts, read whatever their field names.

/**
 * One delivery attempt as the service lists it. The contract does not show the field names inside an
 * entry; the sandbox's are camelCase, and a service may well use snake_case, so both are read.
 */
export function attemptFields(entry) {
  const pick = (...names) => names.map((name) => entry[name]).find((value) => value !== undefined && value !== null);
  const at = pick('createdAt', 'created_at', 'attemptedAt', 'attempted_at', 'created');
  // A number is Unix seconds, as the envelope's `created` is.
  const date = typeof at === 'number' ? new Date(at * 1000) : at ? new Date(at) : null;
  const endpoint = pick('endpointId', 'endpoint_id', 'endpoint');
  return {
    // An expanded endpoint object is named by its id.
    endpoint: endpoint !== null && typeof endpoint === 'object' ? (endpoint.id ?? endpoint.url) : endpoint,
    status: pick('statusCode', 'status_code', 'responseStatus', 'response_status'),
    durationMs: pick('durationMs', 'duration_ms', 'duration'),
    error: pick('error', 'errorMessage', 'error_message'),
    body: pick('responseBody', 'response_body', 'body'),
    at: date && !Number.isNaN(date.getTime()) ? date : null,
  };
}
