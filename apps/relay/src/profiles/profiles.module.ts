import { Global, Module } from '@nestjs/common';
import { ProfileCatalog } from './profile-catalog.service';
import { ProfileWriteLimits } from './profile-write-limits';
import { ProfilesOperatorController } from './profiles-operator.controller';
import { ProfilesController } from './profiles.controller';
import { ProfilesService } from './profiles.service';

@Global()
@Module({
  controllers: [ProfilesController, ProfilesOperatorController],
  providers: [ProfileWriteLimits, ProfileCatalog, ProfilesService],
  exports: [ProfileCatalog, ProfilesService],
})
export class ProfilesModule {}
