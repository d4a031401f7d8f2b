import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

describe("docs/testing.md's CI recipe", () => {
  it('is a GitHub Actions workflow with each step the page names', async () => {
    const page = await readFile(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const block = /```yaml\n([\s\S]*?)```/.exec(page)?.[1];
    expect(block).toBeDefined();
    const workflow = parse(block as string) as {
      on: unknown;
      jobs: Record<string, { 'runs-on': string; steps: { name: string; run?: string; uses?: string }[] }>;
    };
    expect(workflow.on).toBeDefined();
    const [job] = Object.values(workflow.jobs);
    expect(job['runs-on']).toBeTruthy();
    const step = (name: string) => job.steps.find((s) => s.name === name);
    expect(step('Check out')?.uses).toMatch(/^actions\/checkout@/);
    expect(step('Set up Node')?.uses).toMatch(/^actions\/setup-node@/);
    expect(step('Install')?.run).toBe('npm ci');
    expect(step('Start the app')?.run).toContain('npm start &');
    expect(step("Check the receiver against the service's webhook rules")?.run).toMatch(
      /^npx clockhook check --forward-to \S+ --secret/,
    );
    expect(step("Run the app's tests")?.run).toBe('npm test');
    // In that order: the app runs before it is checked, and the check before the tests.
    expect(job.steps.map((s) => s.name)).toEqual([
      'Check out',
      'Set up Node',
      'Install',
      'Start the app',
      "Check the receiver against the service's webhook rules",
      "Run the app's tests",
    ]);
  });
});
