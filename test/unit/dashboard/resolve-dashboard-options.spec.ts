import { ModuleOptionsError } from '../../../lib/errors/module-options.error';
import {
  dashboardPath,
  resolveDashboardOptions,
} from '../../../lib/dashboard/resolve-dashboard-options';

describe('dashboard options', () => {
  const authorize = () => true;

  it('is read-only without authorize, whatever readOnly says', () => {
    expect(resolveDashboardOptions()).toEqual({
      path: 'geneva-drive',
      readOnly: true,
      authorize: null,
      pageSize: 50,
    });
    expect(resolveDashboardOptions({ readOnly: false }).readOnly).toBe(true);
  });

  it('is writable only with readOnly false and an authorize', () => {
    expect(resolveDashboardOptions({ authorize }).readOnly).toBe(false);
    expect(resolveDashboardOptions({ authorize, readOnly: true }).readOnly).toBe(true);
  });

  it('trims slashes off the path and refuses one that is not URL segments', () => {
    expect(dashboardPath('/ops/workflows/')).toBe('ops/workflows');
    expect(() => dashboardPath('a b')).toThrow(ModuleOptionsError);
    expect(() => dashboardPath('../x?y')).toThrow(/URL path segments/);
  });

  it.each([
    [{ pageSize: 0 }, /pageSize must be a whole number from 1 to 1000/],
    [{ readOnly: 'no' }, /readOnly must be true or false/],
    [{ authorize: 'yes' }, /authorize must be a function/],
    [{ prefix: 'x' }, /does not know the option\(s\) prefix/],
  ])('refuses %p at boot', (options, message) => {
    expect(() => resolveDashboardOptions(options as never)).toThrow(message);
  });
});
