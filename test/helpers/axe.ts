import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(on: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the page's Content-Security-Policy allows its own scripts only.
  if (!(await on.evaluate(() => 'axe' in window))) await on.evaluate(await readFile(AXE, 'utf8'));
  const results = await on.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return results
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
