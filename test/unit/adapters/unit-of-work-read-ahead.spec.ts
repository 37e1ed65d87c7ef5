import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../../../lib/adapters/typeorm/unit-of-work';
import type { SignalEntity } from '../../../lib/entities/signal.entity';

/**
 * What a unit of work hands out of the rows read beside its locks: only the row asked for, once,
 * and no signal after the transaction wrote one (a read then must see the write).
 */
describe('UnitOfWork read-ahead', () => {
  const unit = () => new UnitOfWork({} as EntityManager, true, null);
  const signal = { id: 'signal-1' } as SignalEntity;
  const hero = { id: 7 };

  it('hands a hero out once, and only for the type and id it was read for', () => {
    const uow = unit();
    uow.keepHeroReadAhead('Order', '7', hero);
    expect(uow.takeHeroReadAhead('Order', '8')).toBeNull();
    uow.keepHeroReadAhead('Order', '7', hero);
    expect(uow.takeHeroReadAhead('Invoice', '7')).toBeNull();
    uow.keepHeroReadAhead('Order', '7', hero);
    expect(uow.takeHeroReadAhead('Order', '7')).toEqual({ hero });
    expect(uow.takeHeroReadAhead('Order', '7')).toBeNull();
  });

  it('hands out a missing hero as null, which is an answer, not a miss', () => {
    const uow = unit();
    uow.keepHeroReadAhead('Order', '7', null);
    expect(uow.takeHeroReadAhead('Order', '7')).toEqual({ hero: null });
  });

  it('hands a signal out once, only for its id, and never after a signal write', () => {
    const uow = unit();
    uow.keepSignalReadAhead('signal-1', signal);
    expect(uow.takeSignalReadAhead('signal-2')).toBeNull();
    uow.keepSignalReadAhead('signal-1', signal);
    expect(uow.takeSignalReadAhead('signal-1')).toEqual({ signal });
    expect(uow.takeSignalReadAhead('signal-1')).toBeNull();

    uow.keepSignalReadAhead('signal-1', signal);
    uow.signalsWritten();
    expect(uow.takeSignalReadAhead('signal-1')).toBeNull();
  });
});
