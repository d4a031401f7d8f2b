import type { Command } from 'commander';
import type { CheckReport, CheckResult } from '../check/index.js';
import { validateSubscription, LIMITS } from '../contract/index.js';
import { normalizeForwardTarget } from '../listener/target.js';
import { badPortProblem } from '../http/index.js';
import { parseEventList } from './api-options.js';
import { CliError, OptionError, UsageError } from '../errors.js';
import { formatTable, PAINT, printJson, terminalWidth, visibleLength, wrapText } from './output.js';
import { fromEnv, parsePositiveInt, strayArgumentsError } from './process.js';
import { describeRecord, RECORDS_PATH, recordsOnFile } from './secret.js';

interface CheckFlags {
  forwardTo?: string;
  secret?: string;
  events?: string;
  dedupeProbe?: string;
  timeout: string;
  json?: boolean;
}

const MARK = { pass: PAINT.ok('pass'), warn: PAINT.warn('warn'), fail: PAINT.bad('FAIL') };

/**
 * The table of checks; on a terminal too narrow for all of it, without the SENT column (the check's
 * name says what was sent; --json has it), its long cells wrapped between words to fit.
 */
export function formatChecks(checks: CheckResult[], width: number | undefined): string {
  const table = formatTable(
    ['', 'CHECK', 'SENT', 'GOT'],
    checks.map((c) => [MARK[c.status], c.name, c.sent, c.got]),
    undefined,
  );
  if (width === undefined || table.split('\n').every((line) => visibleLength(line) <= width)) return table;
  return formatTable(
    ['', 'CHECK', 'GOT'],
    checks.map((c) => [MARK[c.status], c.name, c.got]),
    width,
    'wrap',
  );
}

/**
 * The "How to fix" lines, one per piece of advice: checks that share one (the valid deliveries of every
 * type, say) are named together before it. On a terminal each is wrapped to it, under its text.
 */
export function formatAdvice(checks: CheckResult[], width: number | undefined): string {
  const indent = '       '; // as wide as "  FAIL "
  const groups = new Map<string, CheckResult[]>();
  for (const check of checks) {
    const key = `${check.status}\n${check.hint ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), check]);
  }
  return [...groups.values()]
    .map((group) => {
      const [check] = group;
      const text = `${group.map((c) => c.id).join(', ')}: ${check.hint ?? ''}`;
      const lines = width === undefined ? [text] : wrapText(text, Math.max(20, width - indent.length));
      return lines.map((line, i) => (i === 0 ? `  ${MARK[check.status]} ${line}` : indent + line)).join('\n');
    })
    .join('\n');
}

function printReport(report: CheckReport): void {
  console.log(`clockhook check ${report.target}\n`);
  const width = terminalWidth();
  console.log(formatChecks(report.checks, width));
  const advice = report.checks.filter((c) => c.status !== 'pass' && c.hint);
  if (advice.length > 0) console.log(`\nHow to fix:\n${formatAdvice(advice, width)}`);
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  console.log(`\n${report.checks.length - failed - warned} passed, ${failed} failed, ${warned} warned`);
}

function parseUrl(value: string, flag: string): URL {
  try {
    return flag === '--forward-to' ? normalizeForwardTarget(value) : new URL(value);
  } catch (error) {
    throw new UsageError(
      error instanceof OptionError && flag === '--forward-to'
        ? error.message
        : `${flag} ${JSON.stringify(value)} is not a URL.`,
    );
  }
}

/** --dedupe-probe, read with fetch: another scheme, or a port fetch refuses, would only ever say "cannot tell". */
function parseProbeUrl(value: string): URL {
  const url = parseUrl(value, '--dedupe-probe');
  const shown = `--dedupe-probe ${JSON.stringify(value)}`;
  if (!/^https?:$/.test(url.protocol))
    throw new UsageError(`${shown} is not an http(s) URL; e.g. http://localhost:3000/processed-count.`);
  const badPort = badPortProblem(url);
  if (badPort) throw new UsageError(`${shown} ${badPort}; serve the probe on another port.`);
  return url;
}

/**
 * Without --secret: the secret of the one endpoint `clockhook listen` registered from this folder, which
 * is the one the app verifies with when it receives through that listen. Named on stderr, so that a
 * run against an app set up with another secret is not a puzzle. With none or several, the user says.
 */
async function secretOnFile(): Promise<string> {
  const records = await recordsOnFile();
  if (records.length === 1) {
    const [record] = records;
    console.error(
      `Using the secret of endpoint ${record.id} (${record.url}), which clockhook listen registered from this folder (${RECORDS_PATH}). Pass --secret to check with another.`,
    );
    return record.secret;
  }
  const need = '--secret is required (or set CLOCKHOOK_SECRET): the secret your receiver verifies signatures with';
  if (records.length === 0)
    throw new UsageError(
      `${need}. Or run check in the folder where clockhook listen runs: it then uses the secret of the endpoint listen registered.`,
    );
  const listed = records.map(describeRecord).join(', ');
  throw new UsageError(
    `${need}: ${RECORDS_PATH} holds the secrets of ${records.length} endpoints, ${listed}; pass the one your receiver uses (npx clockhook secret <id> prints it).`,
  );
}

/** `clockhook check`: a conformance test of the developer's receiver; exit 1 when a check fails. */
export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('test whether your receiver honours the webhook contract')
    .option('--forward-to <url>', 'required: your receiver, 3000, localhost:3000/hooks or a URL')
    .option(
      '--secret <whsec>',
      'the secret your receiver verifies with (default: $CLOCKHOOK_SECRET, else that of the endpoint clockhook listen registered from this folder)',
    )
    .option(
      '--events <types>',
      'comma-separated event types to send valid deliveries of (default: a representative set)',
    )
    .option('--dedupe-probe <url>', 'GET <url>?id=<event id> answers how many times your app processed it')
    .option('--timeout <ms>', 'how long to wait for each answer', String(LIMITS.receiverTimeoutMs))
    .option('--json', 'print { target, ok, checks } for CI')
    .allowExcessArguments()
    .action(async (flags: CheckFlags, command: Command) => {
      if (command.args.length > 0) throw strayArgumentsError('check', command.args, flags.forwardTo);
      if (flags.forwardTo === undefined)
        throw new UsageError('--forward-to is required: the receiver to check, such as --forward-to 3000/webhooks.');
      const secret = flags.secret ?? fromEnv('CLOCKHOOK_SECRET') ?? (await secretOnFile());
      let events: string[] | undefined;
      if (flags.events) {
        const check = validateSubscription(parseEventList(flags.events));
        if (!check.ok || check.types.includes('*'))
          throw new UsageError(`--events: ${check.ok ? 'list event types, not *' : check.message}`);
        events = check.types;
      }
      const { runChecks } = await import('../check/index.js');
      const target = parseUrl(flags.forwardTo, '--forward-to');
      const dedupeProbe = flags.dedupeProbe ? parseProbeUrl(flags.dedupeProbe) : undefined;
      const timeoutMs = parsePositiveInt(flags.timeout, '--timeout');
      const report = await runChecks({ target, secret, events, dedupeProbe, timeoutMs }).catch((error: unknown) => {
        // A receiver that cannot be checked (not running, say) is a result too, for a CI job reading stdout.
        if (flags.json && error instanceof CliError)
          printJson({ target: target.href, ok: false, error: error.message, checks: [] });
        throw error;
      });
      if (flags.json) printJson(report);
      else printReport(report);
      if (!report.ok) process.exitCode = 1;
    });
}
