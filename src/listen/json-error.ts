// Where a config file's JSON breaks, as an editor would point at it: `file:line:column`, the line quoted and a
// caret under the column. Node's own message names no position for many mistakes (a value missing in the
// middle of a line, `"path": ,`), so the text is parsed again with jsonc-parser, the parser of VS Code's JSON
// files, which reports the offset of every error (loaded only when a file is broken).

import type { ParseError } from 'jsonc-parser';

/** What each of jsonc-parser's error codes means, for people. */
const MEANING: Record<string, string> = {
  InvalidSymbol: 'this character cannot be here',
  InvalidNumberFormat: 'this is not a number JSON can read',
  PropertyNameExpected: 'a property name in double quotes is expected here (a trailing comma before it?)',
  ValueExpected: 'a value is missing here',
  ColonExpected: 'a colon is missing before this',
  CommaExpected: 'a comma is missing before this',
  CloseBraceExpected: 'a } is missing before this',
  CloseBracketExpected: 'a ] is missing before this',
  EndOfFileExpected: 'the file goes on after its end',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number is cut short',
  InvalidUnicode: 'this \\u escape is not a character',
  InvalidEscapeCharacter: 'this escape is not one JSON has',
  InvalidCharacter: 'this character cannot be in a string (a tab or a line break?)',
};

/** The comma just before a `}` or `]` at `offset` (`"path": "/",` then `}`), which is where the mistake is. */
function trailingComma(text: string, offset: number): number | null {
  if (text[offset] !== '}' && text[offset] !== ']') return null;
  let at = offset - 1;
  while (at >= 0 && /\s/.test(text[at] as string)) at -= 1;
  return text[at] === ',' ? at : null;
}

/**
 * The first syntax error of `text` (which JSON.parse refused) as `file:line:column: what`, then the line and a
 * caret under its column; null when no position can be found.
 */
export async function jsonErrorAt(file: string, text: string): Promise<string | null> {
  const { default: jsonc } = await import('jsonc-parser');
  const errors: ParseError[] = [];
  jsonc.parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return null;
  const comma = trailingComma(text, first.offset);
  const offset = comma ?? first.offset;
  const before = text.slice(0, offset).split('\n');
  const line = before.length;
  const column = (before.at(-1) ?? '').length + 1;
  const shown = (text.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  const what =
    comma === null
      ? MEANING[jsonc.printParseErrorCode(first.error)]
      : 'a trailing comma, which JSON allows none of: delete it';
  return `${file}:${line}:${column}: not valid JSON: ${what ?? 'the JSON breaks here'}.\n  ${shown}\n  ${' '.repeat(column - 1)}^`;
}
