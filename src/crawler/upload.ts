// The uploader of a task thread (paper §2.2: "write the textual content to a
// temporary disk file", upload afterwards): reads the spool back in order and
// sends it through the sink in parts small enough for one message each; the
// last part carries the statistics, outcomes and inter-site URLs. Apart from
// the thread because forming parts is its own job and runs after the crawl.
import type { Spool } from './spool.js';
import type { PageRecord, ResultSink, TaskResult, ValidatorRecord } from './task.js';

/** Text per part, in characters, beyond which a part is sent early. */
const MAX_PART_TEXT_CHARS = 2_000_000;
/** Validators per part, as a multiple of the pages a part may hold (they are small). */
const VALIDATORS_PER_PAGE = 20;

/** Everything in a part but its pages, validators and digests. */
export type PartHeader = Omit<TaskResult, 'pages' | 'validators' | 'newDigests'>;

/** Uploads the spool in parts of at most `pagesPerPart` pages and closes it; returns how many parts went. */
export async function uploadSpool(spool: Spool, sink: ResultSink, pagesPerPart: number, header: (part: number, final: boolean) => PartHeader): Promise<number> {
  let part = 0;
  let pages: PageRecord[] = [];
  let validators: ValidatorRecord[] = [];
  let textChars = 0;
  const send = async (final: boolean) => {
    const p = pages;
    const v = validators;
    pages = [];
    validators = [];
    textChars = 0;
    await sink.upload({ ...header(part++, final), pages: p, validators: v, newDigests: p.map((x) => x.digest) });
  };
  try {
    for (const r of spool.read()) {
      if (r.kind === 'p') {
        pages.push(r.page);
        textChars += r.page.text.length;
      } else validators.push(r.validator);
      if (pages.length >= pagesPerPart || textChars > MAX_PART_TEXT_CHARS || validators.length >= VALIDATORS_PER_PAGE * pagesPerPart) await send(false);
    }
    await send(true);
  } finally {
    spool.close();
  }
  return part;
}
