// The load hook of ModelStorePostgreSQL; it has no API.
#pragma once
