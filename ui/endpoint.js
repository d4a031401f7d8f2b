// What the page can do with the endpoint: the header's banner and the endpoint's actions both ask.

/** A deleted endpoint cannot be enabled again; any other that is not enabled can. */
export const canReenable = (endpoint) =>
  Boolean(endpoint && endpoint.status !== 'enabled' && endpoint.status !== 'deleted');
