/*
 * How a mission's releases are cited (docs/api.md "Releases"): the creators, publisher and
 * rights that a release's DataCite description names. The member `citation` of the mission
 * configuration; pure, no I/O.
 */

export interface Citation {
  /** Who made the data, as DataCite's creators (at least one). */
  readonly creators: readonly string[];
  readonly publisher: string;
  /** The licence or terms of use, and their address. */
  readonly rights?: string;
  readonly rightsUri?: string;
}

/** Without a `citation` member: the mission's science data centre made and publishes its data. */
export function defaultCitation(missionName: string): Citation {
  const centre = `${missionName.toUpperCase()} Science Data Centre`;
  return Object.freeze({ creators: Object.freeze([centre]), publisher: centre });
}

/** Checks an untrusted `citation` member; every refusal names the member at fault. */
export function validateCitation(raw: unknown, missionName: string, fail: (what: string) => never): Citation {
  if (raw === undefined) return defaultCitation(missionName);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('citation must be an object: {"creators": [...], "publisher": "...", "rights": "...", "rightsUri": "..."}');
  const o = raw as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!['creators', 'publisher', 'rights', 'rightsUri'].includes(key)) fail(`citation.${key} is not a member of a citation (creators, publisher, rights, rightsUri)`);
  }
  const text = (v: unknown, member: string): string =>
    typeof v === 'string' && v.trim() !== '' && v.length <= 1000 ? v : fail(`${member} must be a non-empty text of at most 1000 characters`);
  if (!Array.isArray(o.creators) || o.creators.length === 0) fail('citation.creators must be a non-empty array of names');
  const creators = (o.creators as unknown[]).map((c, i) => text(c, `citation.creators[${i}]`));
  const rightsUri = o.rightsUri === undefined ? undefined : text(o.rightsUri, 'citation.rightsUri');
  if (rightsUri !== undefined && !/^https?:\/\/\S+$/.test(rightsUri)) fail('citation.rightsUri must be an http or https address');
  return Object.freeze({
    creators: Object.freeze(creators),
    publisher: text(o.publisher, 'citation.publisher'),
    ...(o.rights !== undefined ? { rights: text(o.rights, 'citation.rights') } : {}),
    ...(rightsUri !== undefined ? { rightsUri } : {}),
  });
}
