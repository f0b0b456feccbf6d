// The load hook of ModelStoreAdapters; it has no API.
#pragma once
