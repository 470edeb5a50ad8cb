import { Global, Module } from '@nestjs/common';
import { ProfileCatalog } from './profile-catalog.service';
import { ProfilesController, ProfilesOperatorController } from './profiles.controller';

@Global()
@Module({ controllers: [ProfilesController, ProfilesOperatorController], providers: [ProfileCatalog], exports: [ProfileCatalog] })
export class ProfilesModule {}
