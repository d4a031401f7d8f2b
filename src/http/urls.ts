/** Whether `value` is an http:// or https:// URL. */
export const isHttpUrl = (value: string): boolean => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);

/**
 * A URL as shown to people (the ready line, the page, messages): its password, if it has one, as
 * `***`, since those go to terminals, logs and CI output.
 */
export function shownUrl(url: URL): string {
  if (!url.password) return url.href;
  const shown = new URL(url.href);
  shown.password = '***';
  return shown.href;
}
