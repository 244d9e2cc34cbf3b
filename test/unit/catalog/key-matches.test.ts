import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, keyIdOf, keyMatches } from '../../../src/catalog/key-store.js';

describe('a presented key against a stored hash', () => {
  it('matches only its own hash, also once its hash is remembered', () => {
    const { key, keyId } = generateKey();
    const other = generateKey().key;
    for (let i = 0; i < 3; i++) {
      expect(keyMatches(key, hashKey(key))).toBe(true);
      expect(keyMatches(key, hashKey(other))).toBe(false);
      expect(keyMatches(other, hashKey(key))).toBe(false);
      expect(keyIdOf(key)).toBe(keyId);
    }
    expect(keyMatches(key, 'not hex')).toBe(false);
    expect(keyMatches(key, hashKey(key).slice(0, 62))).toBe(false);
  });

  it('remembers no made-up key: a key never matched stays unknown', () => {
    const { key } = generateKey();
    expect(keyMatches(key, hashKey('something else'))).toBe(false);
    // Not remembered: its id still comes from the pattern, which refuses a changed shape.
    expect(keyIdOf(`${key}x`)).toBeUndefined();
    expect(keyIdOf(key)).toBe(key.slice(4, 20));
  });
});
