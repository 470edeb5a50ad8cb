import { Module } from '@nestjs/common';
import { PersonalDataService } from './personal-data.service';

/** Forgetting personal content (crypto-shredding): by device, by time, by retention, on revoke. */
@Module({ providers: [PersonalDataService], exports: [PersonalDataService] })
export class PersonalDataModule {}
