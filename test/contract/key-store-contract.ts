import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyNameError, type KeyStore } from '../../src/catalog/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/**
 * The KeyStore port's contract, run on the key store of every catalog adapter
 * (the keys live beside the records, so each adapter has its own).
 */
export function describeKeyStore(name: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`key store contract: ${name}`, () => {
    let subject: CatalogUnderTest;
    let keys: KeyStore;
    beforeAll(async () => {
      subject = await make();
      keys = subject.catalog.keys();
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('has no key until one is created, and a created key checks as its name', async () => {
      expect(await keys.anyExist()).toBe(false);
      const { key, info } = await keys.create('swe-pipeline');
      expect(key).toMatch(/^sdc_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(key.startsWith(`sdc_${info.keyId}_`)).toBe(true);
      expect(info).toMatchObject({ name: 'swe-pipeline' });
      expect(Number.isNaN(Date.parse(info.createdAt))).toBe(false);
      expect(await keys.anyExist()).toBe(true);
      expect(await keys.check(key)).toEqual({ kind: 'valid', name: 'swe-pipeline', role: 'uploader' });
    });

    it('refuses a key that differs from a real one, or is not a key at all', async () => {
      const { key } = await keys.create('mag-pipeline');
      const last = key.at(-1) === 'A' ? 'B' : 'A';
      expect(await keys.check(key.slice(0, -1) + last)).toEqual({ kind: 'invalid' });
      expect(await keys.check(key.replace(/^sdc_[0-9a-f]{16}/, 'sdc_0000000000000000'))).toEqual({ kind: 'invalid' });
      for (const junk of ['', 'secret', `${key} `, key.toUpperCase(), "sdc_' or 1=1 --"]) {
        expect(await keys.check(junk), JSON.stringify(junk)).toEqual({ kind: 'invalid' });
      }
    });

    it('refuses a bad or already used name with a message that says what is expected', async () => {
      await expect(keys.create('has space')).rejects.toThrow(KeyNameError);
      await expect(keys.create('has space')).rejects.toThrow(/expected 1-64 letters, digits/);
      await expect(keys.create('x'.repeat(65))).rejects.toThrow(KeyNameError);
      await expect(keys.create('swe-pipeline')).rejects.toThrow(/already exists/);
    });

    it('lets exactly one of several racing creates of one name win; the others are told the name is taken', async () => {
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => keys.create('racer')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(KeyNameError);
          expect(String(r.reason)).toMatch(/already exists/);
        }
      }
      expect((await keys.list()).filter((k) => k.name === 'racer')).toHaveLength(1);
    });

    it('reads a key at every check: one checked valid before is refused as soon as it is revoked', async () => {
      const { key } = await keys.create('glows-pipeline');
      // Checked again and again, as a client that sends its key on every request.
      for (let i = 0; i < 3; i++) expect(await keys.check(key)).toEqual({ kind: 'valid', name: 'glows-pipeline', role: 'uploader' });
      const last = key.at(-1) === 'A' ? 'B' : 'A';
      expect(await keys.check(key.slice(0, -1) + last)).toEqual({ kind: 'invalid' });
      expect(await keys.revoke('glows-pipeline')).toBe('revoked');
      expect(await keys.check(key)).toMatchObject({ kind: 'revoked', name: 'glows-pipeline' });
    });

    it('lists keys by name without their text, and revokes them for good', async () => {
      const { key } = await keys.create('hit-pipeline');
      const listed = await keys.list();
      expect(listed.map((k) => k.name)).toEqual([...listed.map((k) => k.name)].sort());
      expect(JSON.stringify(listed)).not.toContain(key);
      expect(JSON.stringify(listed)).not.toContain(key.slice(22));

      expect(await keys.revoke('hit-pipeline')).toBe('revoked');
      expect(await keys.revoke('hit-pipeline')).toBe('already_revoked');
      expect(await keys.revoke('no-such-key')).toBe('unknown');
      const check = await keys.check(key);
      expect(check).toMatchObject({ kind: 'revoked', name: 'hit-pipeline' });
      expect(check.kind === 'revoked' && !Number.isNaN(Date.parse(check.revokedAt))).toBe(true);
      expect((await keys.list()).find((k) => k.name === 'hit-pipeline')?.revokedAt).toBeDefined();
      // A revoked name is never reused, and revoking every key must not open uploads again.
      await expect(keys.create('hit-pipeline')).rejects.toThrow(/already exists/);
      for (const k of await keys.list()) await keys.revoke(k.name);
      expect(await keys.anyExist()).toBe(true);
    });

    it('rotates a key under the same name: both work during the overlap, then only the new one', async () => {
      const { key: old } = await keys.create('codice-pipeline');
      const rotated = await keys.rotate('codice-pipeline', 3600);
      expect(rotated.kind).toBe('rotated');
      if (rotated.kind !== 'rotated') return;
      expect(rotated.info.name).toBe('codice-pipeline');
      expect(Date.parse(rotated.oldUntil) - Date.now()).toBeGreaterThan(3500_000);
      expect(await keys.check(rotated.key)).toEqual({ kind: 'valid', name: 'codice-pipeline', role: 'uploader' });
      expect(await keys.check(old)).toEqual({ kind: 'valid', name: 'codice-pipeline', role: 'uploader' });
      expect((await keys.list()).filter((k) => k.name === 'codice-pipeline')).toHaveLength(2);
      // A create of the name is still refused: a name belongs to one party.
      await expect(keys.create('codice-pipeline')).rejects.toThrow(/already exists/);

      // An overlap of 0: the previous key ends at once.
      const again = await keys.rotate('codice-pipeline', 0);
      expect(again.kind).toBe('rotated');
      if (again.kind !== 'rotated') return;
      expect(await keys.check(rotated.key)).toMatchObject({ kind: 'revoked', name: 'codice-pipeline' });
      expect(await keys.check(old)).toMatchObject({ kind: 'revoked', name: 'codice-pipeline' });
      expect(await keys.check(again.key)).toEqual({ kind: 'valid', name: 'codice-pipeline', role: 'uploader' });

      // Revoking the name ends every key of it, one in its overlap included.
      const third = await keys.rotate('codice-pipeline', 3600);
      expect(await keys.revoke('codice-pipeline')).toBe('revoked');
      expect(await keys.check(again.key)).toMatchObject({ kind: 'revoked' });
      expect(third.kind === 'rotated' && (await keys.check(third.key)).kind).toBe('revoked');
      expect(await keys.rotate('codice-pipeline', 60)).toEqual({ kind: 'revoked' });
      expect(await keys.rotate('no-such-name', 60)).toEqual({ kind: 'unknown' });
    });

    it('makes uploader keys unless told, curator keys when asked; a rotation keeps the role', async () => {
      const { info: uploader } = await keys.create('swapi-pipeline');
      expect(uploader.role).toBe('uploader');
      const { key, info } = await keys.create('archive-curator', 'curator');
      expect(info).toMatchObject({ name: 'archive-curator', role: 'curator' });
      expect(await keys.check(key)).toEqual({ kind: 'valid', name: 'archive-curator', role: 'curator' });
      const listed = await keys.list();
      expect(listed.find((k) => k.name === 'archive-curator')?.role).toBe('curator');
      expect(listed.find((k) => k.name === 'swapi-pipeline')?.role).toBe('uploader');

      const rotated = await keys.rotate('archive-curator', 60);
      expect(rotated.kind === 'rotated' && rotated.info.role).toBe('curator');
      expect(rotated.kind === 'rotated' && (await keys.check(rotated.key))).toEqual({ kind: 'valid', name: 'archive-curator', role: 'curator' });
      expect(await keys.check(key)).toEqual({ kind: 'valid', name: 'archive-curator', role: 'curator' });
      expect((await keys.list()).filter((k) => k.name === 'archive-curator').map((k) => k.role)).toEqual(['curator', 'curator']);
      const again = await keys.rotate('swapi-pipeline', 0);
      expect(again.kind === 'rotated' && (await keys.check(again.key))).toEqual({ kind: 'valid', name: 'swapi-pipeline', role: 'uploader' });
    });

    it('refuses a role it does not know, and keeps no key for it', async () => {
      await expect(keys.create('odd-role', 'admin' as never)).rejects.toThrow(/expected one of uploader, curator/);
      expect((await keys.list()).some((k) => k.name === 'odd-role')).toBe(false);
    });

    it('lets one of racing rotations of a name win', async () => {
      await keys.create('idex-pipeline');
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => keys.rotate('idex-pipeline', 60)));
      expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
      const generations = (await keys.list()).filter((k) => k.name === 'idex-pipeline');
      expect(generations).toHaveLength(1 + results.filter((r) => r.status === 'fulfilled').length);
    });
  });
}
