// htmlparser2's Tokenizer with a native scan. Its fastForwardTo (skip to the
// next '<', '>', quote... in text, attribute values, comments and raw-text
// tags) walks the string one charCodeAt at a time, which is most of the
// parse time on text-heavy pages; String.prototype.indexOf does the same
// scan natively, about 100× faster on a 20 KB page. fastForwardTo and the
// fields it uses (buffer, index, offset) are private in htmlparser2 12, so
// test/crawler/structures.test.ts checks that both tokenizers emit the same
// events; if a later htmlparser2 drops the method, this override is simply
// never called.
import { Tokenizer } from 'htmlparser2';

interface TokenizerState {
  buffer: string;
  index: number;
  offset: number;
}

/** Same contract as htmlparser2's: advance `index` to the next `c` (true), or to the end of the buffer (false). */
function fastForwardTo(this: TokenizerState, c: number): boolean {
  const i = this.buffer.indexOf(String.fromCharCode(c), this.index + 1 - this.offset);
  if (i >= 0) {
    this.index = i + this.offset;
    return true;
  }
  // The tokenizer increments index after each state call, hence length - 1.
  this.index = this.buffer.length + this.offset - 1;
  return false;
}

export class FastTokenizer extends Tokenizer {}
Object.defineProperty(FastTokenizer.prototype, 'fastForwardTo', { value: fastForwardTo, writable: true, configurable: true });
