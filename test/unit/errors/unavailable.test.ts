import { describe, expect, it } from 'vitest';
import { backendFailure, unavailableError } from '../../../src/errors/index.js';

/** An error shaped as a driver throws it: a message, and the fields the driver sets. */
const driverError = (message: string, fields: Record<string, unknown> = {}) => Object.assign(new Error(message), fields);

describe('which failures are a dependency down (503 with Retry-After), and whose', () => {
  it.each([
    ['pg_terminate_backend (57P01)', driverError('terminating connection due to administrator command', { code: '57P01' }), 'SDC_CATALOG_UNAVAILABLE'],
    ['a server shutting down (57P02, 57P03)', driverError('the database system is shutting down', { code: '57P03' }), 'SDC_CATALOG_UNAVAILABLE'],
    ['a connection exception (08006)', driverError('connection failure', { code: '08006' }), 'SDC_CATALOG_UNAVAILABLE'],
    ['too many connections (53300)', driverError('sorry, too many clients already', { code: '53300' }), 'SDC_CATALOG_UNAVAILABLE'],
    ["pg's own connection texts", driverError('Connection terminated unexpectedly'), 'SDC_CATALOG_UNAVAILABLE'],
    ['a refused connect', driverError('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED', syscall: 'connect' }), 'SDC_CATALOG_UNAVAILABLE'],
    ['a reset under the catalog', backendFailure('PostgreSQL catalog', 'insert', driverError('read ECONNRESET', { code: 'ECONNRESET', syscall: 'read' })), 'SDC_CATALOG_UNAVAILABLE'],
    ['the pool exhausted', driverError('timeout exceeded when trying to connect'), 'SDC_CATALOG_BUSY'],
    ['SQLite locked past busy_timeout', backendFailure('SQLite catalog', 'insert', driverError('database is locked', { code: 'SQLITE_BUSY' })), 'SDC_CATALOG_BUSY'],
    ['S3 unreachable', driverError('connect ECONNREFUSED', { code: 'ECONNREFUSED', $metadata: { attempts: 3 } }), 'SDC_STORE_UNAVAILABLE'],
    ['S3 answering 503 SlowDown', driverError('Please reduce your request rate.', { name: 'SlowDown', $metadata: { httpStatusCode: 503 } }), 'SDC_STORE_UNAVAILABLE'],
    ['no S3 credentials from any provider', backendFailure('S3 store', 'HEAD', driverError('Could not load credentials from any providers', { name: 'CredentialsProviderError' })), 'SDC_STORE_UNAVAILABLE'],
    ['S3 refusing the key itself (revoked, rotated)', driverError('The AWS Access Key Id you provided does not exist in our records.', { name: 'InvalidAccessKeyId', $metadata: { httpStatusCode: 403 } }), 'SDC_STORE_UNAVAILABLE'],
    ['S3 failure wrapped by the store', backendFailure('S3 store', 'list', driverError('socket hang up', { code: 'ECONNRESET', $metadata: {} })), 'SDC_STORE_UNAVAILABLE'],
  ])('%s', (_label, err, code) => {
    const answered = unavailableError(err);
    expect(answered?.code).toBe(code);
    expect(answered?.statusCode).toBe(503);
    expect(answered?.headers['Retry-After']).toBe('5');
    expect(answered?.cause).toBe(err);
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a constraint the code should have avoided', driverError('duplicate key value violates unique constraint', { code: '23505' })],
    ['S3 refusing the request (403)', driverError('Access Denied', { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } })],
    ['a client that hung up (reset, not under a catalog)', driverError('aborted', { code: 'ECONNRESET', syscall: 'read' })],
    ['a full disk', driverError('ENOSPC: no space left on device', { code: 'ENOSPC' })],
  ])('not %s', (_label, err) => {
    expect(unavailableError(err)).toBeUndefined();
  });
});
