// The manager's memory of hosts volunteers' owners block: per host, bounded, least recently refused forgotten first.
import { describe, expect, it } from 'vitest';
import { OwnerBlocks } from '../../src/manager/owner-blocks.js';

describe('OwnerBlocks', () => {
  it('remembers (host, volunteer) per host, case-insensitively, and forgets the least recently refused pair beyond its bound', () => {
    const b = new OwnerBlocks(3);
    b.note('A.example', 'v1');
    b.note('a.example', 'v2');
    b.note('b.example', 'v1');
    expect([...b.refusers('a.EXAMPLE')].sort()).toEqual(['v1', 'v2']);
    b.note('a.example', 'v1'); // refused again: now the most recent
    b.note('c.example', 'v3'); // over the bound: (a.example, v2) goes
    expect(b.size).toBe(3);
    expect([...b.refusers('a.example')]).toEqual(['v1']);
    expect([...b.refusers('b.example')]).toEqual(['v1']);
    expect([...b.refusers('d.example')]).toEqual([]);
  });
});
