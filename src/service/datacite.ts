import { citationOf, type MissionConfig } from '../mission/index.js';
import type { ReleaseSummary } from '../wire/release.js';

/*
 * A release described in the DataCite Metadata Schema 4 (its JSON form, schemaVersion
 * http://datacite.org/schema/kernel-4), for `GET /releases/{n}?format=datacite` (docs/api.md
 * "Releases"): what a repository registering a DOI for the release needs. Its mandatory
 * properties (identifiers, creators, titles, publisher, publicationYear, types) always; the
 * creators, publisher and rights from the mission's citation (mission/citation.ts). Without a
 * DOI yet, the identifier is the release's address (type URL).
 */

/** The DataCite JSON of a release; `address`: where it is served (SDC_PUBLIC_URL-based when set). */
export function dataciteOf(mission: MissionConfig, release: ReleaseSummary, address: string): Record<string, unknown> {
  const citation = citationOf(mission);
  return {
    identifiers: [{ identifier: address, identifierType: 'URL' }],
    creators: citation.creators.map((name) => ({ name, nameType: 'Organizational' })),
    titles: [{ title: release.title }],
    publisher: citation.publisher,
    publicationYear: release.release_date.slice(0, 4),
    types: { resourceType: release.kind === 'early-release' ? 'Early data release' : 'Data release', resourceTypeGeneral: 'Dataset' },
    ...(release.description !== undefined ? { descriptions: [{ description: release.description, descriptionType: 'Abstract' }] } : {}),
    dates: [
      { date: release.release_date, dateType: 'Available' },
      { date: release.created_at, dateType: 'Created' },
      ...(release.retracted_date !== undefined ? [{ date: release.retracted_date, dateType: 'Withdrawn', dateInformation: release.retracted_reason ?? '' }] : []),
    ],
    sizes: [`${release.file_count} files`, `${release.bytes} bytes`],
    version: String(release.release),
    ...(citation.rights !== undefined ? { rightsList: [{ rights: citation.rights, ...(citation.rightsUri !== undefined ? { rightsUri: citation.rightsUri } : {}) }] } : {}),
    schemaVersion: 'http://datacite.org/schema/kernel-4',
  };
}
