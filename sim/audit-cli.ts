// The `sim audit-paper` verb: prints the audit of the paper's Tables 1–4 (sim/audit.ts).
import type { Command } from 'commander';
import { auditPaper } from './audit.js';
import { markdownAudit } from './audit-report.js';

export function registerAuditPaper(program: Command): void {
  program
    .command('audit-paper')
    .description("check the paper's published Tables 1–4 against each other: formula (5)'s best score per strategy, the success rates they need, and which figures are infeasible")
    .option('--json', 'print the whole audit as one JSON object instead of Markdown')
    .action((flags: { json?: boolean }) => {
      const report = auditPaper();
      process.stdout.write(flags.json ? JSON.stringify(report) + '\n' : markdownAudit(report) + '\n');
    });
}
