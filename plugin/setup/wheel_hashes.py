"""SHA-256 of every wheel of the pinned requirements, for pip's hash-checking mode.

:func:`polytopo.plugin.setup.dependencies.install_missing` passes these to pip with ``--require-hashes``, so
an index, mirror or proxy that serves any other file than the published wheel makes the
install fail instead of running foreign code inside QGIS. The values are the ``sha256``
of the wheels PyPI lists for each pinned version (its simple index), one per wheel; keep
them in step with :data:`polytopo.plugin.setup.dependencies.REQUIREMENTS` (a test checks that every pin has
hashes).
"""

__all__ = ["WHEEL_HASHES"]

#: ``{pin: (sha256, ...)}``, each hash commented with the wheel's Python tag and platform.
WHEEL_HASHES = {
    "numpy==1.24.2": (
        "eef70b4fc1e872ebddc38cddacc87c19a3709c0e3e5d20bf3954c147b1dd941d",  # cp310 macosx_10_9_x86_64
        "e8d2859428712785e8a8b7d2b3ef0a1d1565892367b32f915c4a4df44d0e64f5",  # cp310 macosx_11_0_arm64
        "6524630f71631be2dabe0c541e7675db82651eb998496bbe16bc4f77f0772253",  # cp310 manylinux_2_17_aarch64
        "a51725a815a6188c662fb66fb32077709a9ca38053f0274640293a14fdd22978",  # cp310 manylinux_2_17_x86_64
        "2620e8592136e073bd12ee4536149380695fbe9ebeae845b81237f986479ffc9",  # cp310 win32
        "97cf27e51fa078078c649a51d7ade3c92d9e709ba2bfb97493007103c741f1d0",  # cp310 win_amd64
        "7de8fdde0003f4294655aa5d5f0a89c26b9f22c0a58790c38fae1ed392d44a5a",  # cp311 macosx_10_9_x86_64
        "4173bde9fa2a005c2c6e2ea8ac1618e2ed2c1c6ec8a7657237854d42094123a0",  # cp311 macosx_11_0_arm64
        "4cecaed30dc14123020f77b03601559fff3e6cd0c048f8b5289f4eeabb0eb281",  # cp311 manylinux_2_17_aarch64
        "9a23f8440561a633204a67fb44617ce2a299beecf3295f0d13c495518908e910",  # cp311 manylinux_2_17_x86_64
        "e428c4fbfa085f947b536706a2fc349245d7baa8334f0c5723c56a10595f9b95",  # cp311 win32
        "557d42778a6869c2162deb40ad82612645e21d79e11c1dc62c6e82a2220ffb04",  # cp311 win_amd64
        "d0a2db9d20117bf523dde15858398e7c0858aadca7c0f088ac0d6edd360e9ad2",  # cp38 macosx_10_9_x86_64
        "c72a6b2f4af1adfe193f7beb91ddf708ff867a3f977ef2ec53c0ffb8283ab9f5",  # cp38 macosx_11_0_arm64
        "c29e6bd0ec49a44d7690ecb623a8eac5ab8a923bce0bea6293953992edf3a76a",  # cp38 manylinux_2_17_aarch64
        "2eabd64ddb96a1239791da78fa5f4e1693ae2dadc82a76bc76a14cbb2b966e96",  # cp38 manylinux_2_17_x86_64
        "e3ab5d32784e843fc0dd3ab6dcafc67ef806e6b6828dc6af2f689be0eb4d781d",  # cp38 win32
        "76807b4063f0002c8532cfeac47a3068a69561e9c8715efdad3c642eb27c0756",  # cp38 win_amd64
        "4199e7cfc307a778f72d293372736223e39ec9ac096ff0a2e64853b866a8e18a",  # cp39 macosx_10_9_x86_64
        "adbdce121896fd3a17a77ab0b0b5eedf05a9834a18699db6829a64e1dfccca7f",  # cp39 macosx_11_0_arm64
        "889b2cc88b837d86eda1b17008ebeb679d82875022200c6e8e4ce6cf549b7acb",  # cp39 manylinux_2_17_aarch64
        "f64bb98ac59b3ea3bf74b02f13836eb2e24e48e0ab0145bbda646295769bd780",  # cp39 manylinux_2_17_x86_64
        "63e45511ee4d9d976637d11e6c9864eae50e12dc9598f531c035265991910468",  # cp39 win32
        "a77d3e1163a7770164404607b7ba3967fb49b24782a6ef85d9b5f54126cc39e5",  # cp39 win_amd64
        "92011118955724465fb6853def593cf397b4a1367495e0b59a7e69d40c4eb71d",  # pp38 macosx_10_9_x86_64
        "f9006288bcf4895917d02583cf3411f98631275bc67cce355a7f39f8c14338fa",  # pp38 manylinux_2_17_x86_64
        "150947adbdfeceec4e5926d956a06865c1c690f2fd902efede4ca6fe2e657c3f",  # pp38 win_amd64
    ),
    "shapely==2.1.2": (
        "7ae48c236c0324b4e139bea88a306a04ca630f49be66741b340729d380d8f52f",  # cp310 macosx_10_9_x86_64
        "eba6710407f1daa8e7602c347dfc94adc02205ec27ed956346190d66579eb9ea",  # cp310 macosx_11_0_arm64
        "ef4a456cc8b7b3d50ccec29642aa4aeda959e9da2fe9540a92754770d5f0cf1f",  # cp310 manylinux2014_aarch64
        "e38a190442aacc67ff9f75ce60aec04893041f16f97d242209106d502486a142",  # cp310 manylinux2014_x86_64
        "40d784101f5d06a1fd30b55fc11ea58a61be23f930d934d86f19a180909908a4",  # cp310 musllinux_1_2_aarch64
        "f6f6cd5819c50d9bcf921882784586aab34a4bd53e7553e175dece6db513a6f0",  # cp310 musllinux_1_2_x86_64
        "fe9627c39c59e553c90f5bc3128252cb85dc3b3be8189710666d2f8bc3a5503e",  # cp310 win32
        "1d0bfb4b8f661b3b4ec3565fa36c340bfb1cda82087199711f86a88647d26b2f",  # cp310 win_amd64
        "91121757b0a36c9aac3427a651a7e6567110a4a67c97edf04f8d55d4765f6618",  # cp311 macosx_10_9_x86_64
        "16a9c722ba774cf50b5d4541242b4cce05aafd44a015290c82ba8a16931ff63d",  # cp311 macosx_11_0_arm64
        "cc4f7397459b12c0b196c9efe1f9d7e92463cbba142632b4cc6d8bbbbd3e2b09",  # cp311 manylinux2014_aarch64
        "136ab87b17e733e22f0961504d05e77e7be8c9b5a8184f685b4a91a84efe3c26",  # cp311 manylinux2014_x86_64
        "16c5d0fc45d3aa0a69074979f4f1928ca2734fb2e0dde8af9611e134e46774e7",  # cp311 musllinux_1_2_aarch64
        "6ddc759f72b5b2b0f54a7e7cde44acef680a55019eb52ac63a7af2cf17cb9cd2",  # cp311 musllinux_1_2_x86_64
        "2fa78b49485391224755a856ed3b3bd91c8455f6121fee0db0e71cefb07d0ef6",  # cp311 win32
        "c64d5c97b2f47e3cd9b712eaced3b061f2b71234b3fc263e0fcf7d889c6559dc",  # cp311 win_amd64
        "fe2533caae6a91a543dec62e8360fe86ffcdc42a7c55f9dfd0128a977a896b94",  # cp312 macosx_10_13_x86_64
        "ba4d1333cc0bc94381d6d4308d2e4e008e0bd128bdcff5573199742ee3634359",  # cp312 macosx_11_0_arm64
        "0bd308103340030feef6c111d3eb98d50dc13feea33affc8a6f9fa549e9458a3",  # cp312 manylinux2014_aarch64
        "1e7d4d7ad262a48bb44277ca12c7c78cb1b0f56b32c10734ec9a1d30c0b0c54b",  # cp312 manylinux2014_x86_64
        "e9eddfe513096a71896441a7c37db72da0687b34752c4e193577a145c71736fc",  # cp312 musllinux_1_2_aarch64
        "980c777c612514c0cf99bc8a9de6d286f5e186dcaf9091252fcd444e5638193d",  # cp312 musllinux_1_2_x86_64
        "9111274b88e4d7b54a95218e243282709b330ef52b7b86bc6aaf4f805306f454",  # cp312 win32
        "743044b4cfb34f9a67205cee9279feaf60ba7d02e69febc2afc609047cb49179",  # cp312 win_amd64
        "b510dda1a3672d6879beb319bc7c5fd302c6c354584690973c838f46ec3e0fa8",  # cp313 macosx_10_13_x86_64
        "8cff473e81017594d20ec55d86b54bc635544897e13a7cfc12e36909c5309a2a",  # cp313 macosx_11_0_arm64
        "fe7b77dc63d707c09726b7908f575fc04ff1d1ad0f3fb92aec212396bc6cfe5e",  # cp313 manylinux2014_aarch64
        "7ed1a5bbfb386ee8332713bf7508bc24e32d24b74fc9a7b9f8529a55db9f4ee6",  # cp313 manylinux2014_x86_64
        "a84e0582858d841d54355246ddfcbd1fce3179f185da7470f41ce39d001ee1af",  # cp313 musllinux_1_2_aarch64
        "dc3487447a43d42adcdf52d7ac73804f2312cbfa5d433a7d2c506dcab0033dfd",  # cp313 musllinux_1_2_x86_64
        "9c3a3c648aedc9f99c09263b39f2d8252f199cb3ac154fadc173283d7d111350",  # cp313 win32
        "ca2591bff6645c216695bdf1614fca9c82ea1144d4a7591a466fef64f28f0715",  # cp313 win_amd64
        "2d93d23bdd2ed9dc157b46bc2f19b7da143ca8714464249bef6771c679d5ff40",  # cp313 macosx_10_13_x86_64
        "01d0d304b25634d60bd7cf291828119ab55a3bab87dc4af1e44b07fb225f188b",  # cp313 macosx_11_0_arm64
        "8d8382dd120d64b03698b7298b89611a6ea6f55ada9d39942838b79c9bc89801",  # cp313 manylinux2014_aarch64
        "19efa3611eef966e776183e338b2d7ea43569ae99ab34f8d17c2c054d3205cc0",  # cp313 manylinux2014_x86_64
        "346ec0c1a0fcd32f57f00e4134d1200e14bf3f5ae12af87ba83ca275c502498c",  # cp313 musllinux_1_2_aarch64
        "6305993a35989391bd3476ee538a5c9a845861462327efe00dd11a5c8c709a99",  # cp313 musllinux_1_2_x86_64
        "c8876673449f3401f278c86eb33224c5764582f72b653a415d0e6672fde887bf",  # cp313 win32
        "4a44bc62a10d84c11a7a3d7c1c4fe857f7477c3506e24c9062da0db0ae0c449c",  # cp313 win_amd64
        "9a522f460d28e2bf4e12396240a5fc1518788b2fcd73535166d748399ef0c223",  # cp314 macosx_10_13_x86_64
        "1ff629e00818033b8d71139565527ced7d776c269a49bd78c9df84e8f852190c",  # cp314 macosx_11_0_arm64
        "f67b34271dedc3c653eba4e3d7111aa421d5be9b4c4c7d38d30907f796cb30df",  # cp314 manylinux2014_aarch64
        "21952dc00df38a2c28375659b07a3979d22641aeb104751e769c3ee825aadecf",  # cp314 manylinux2014_x86_64
        "1f2f33f486777456586948e333a56ae21f35ae273be99255a191f5c1fa302eb4",  # cp314 musllinux_1_2_aarch64
        "cf831a13e0d5a7eb519e96f58ec26e049b1fad411fc6fc23b162a7ce04d9cffc",  # cp314 musllinux_1_2_x86_64
        "61edcd8d0d17dd99075d320a1dd39c0cb9616f7572f10ef91b4b5b00c4aeb566",  # cp314 win32
        "a444e7afccdb0999e203b976adb37ea633725333e5b119ad40b1ca291ecf311c",  # cp314 win_amd64
        "5ebe3f84c6112ad3d4632b1fd2290665aa75d4cef5f6c5d77c4c95b324527c6a",  # cp314 macosx_10_13_x86_64
        "5860eb9f00a1d49ebb14e881f5caf6c2cf472c7fd38bd7f253bbd34f934eb076",  # cp314 macosx_11_0_arm64
        "b705c99c76695702656327b819c9660768ec33f5ce01fa32b2af62b56ba400a1",  # cp314 manylinux2014_aarch64
        "a1fd0ea855b2cf7c9cddaf25543e914dd75af9de08785f20ca3085f2c9ca60b0",  # cp314 manylinux2014_x86_64
        "df90e2db118c3671a0754f38e36802db75fe0920d211a27481daf50a711fdf26",  # cp314 musllinux_1_2_aarch64
        "361b6d45030b4ac64ddd0a26046906c8202eb60d0f9f53085f5179f1d23021a0",  # cp314 musllinux_1_2_x86_64
        "b54df60f1fbdecc8ebc2c5b11870461a6417b3d617f555e5033f1505d36e5735",  # cp314 win32
        "0036ac886e0923417932c2e6369b6c52e38e0ff5d9120b90eef5cd9a5fc5cae9",  # cp314 win_amd64
    ),
    "scipy==1.10.1": (
        "e7354fd7527a4b0377ce55f286805b34e8c54b91be865bac273f527e1b839019",  # cp310 macosx_10_9_x86_64
        "4b3f429188c66603a1a5c549fb414e4d3bdc2a24792e061ffbd607d3d75fd84e",  # cp310 macosx_12_0_arm64
        "1553b5dcddd64ba9a0d95355e63fe6c3fc303a8fd77c7bc91e77d61363f7433f",  # cp310 manylinux_2_17_aarch64
        "4c0ff64b06b10e35215abce517252b375e580a6125fd5fdf6421b98efbefb2d2",  # cp310 manylinux_2_17_x86_64
        "fae8a7b898c42dffe3f7361c40d5952b6bf32d10c4569098d276b4c547905ee1",  # cp310 win_amd64
        "0f1564ea217e82c1bbe75ddf7285ba0709ecd503f048cb1236ae9995f64217bd",  # cp311 macosx_10_9_x86_64
        "d925fa1c81b772882aa55bcc10bf88324dadb66ff85d548c71515f6689c6dac5",  # cp311 macosx_12_0_arm64
        "aaea0a6be54462ec027de54fca511540980d1e9eea68b2d5c1dbfe084797be35",  # cp311 manylinux_2_17_aarch64
        "15a35c4242ec5f292c3dd364a7c71a61be87a3d4ddcc693372813c0b73c9af1d",  # cp311 manylinux_2_17_x86_64
        "43b8e0bcb877faf0abfb613d51026cd5cc78918e9530e375727bf0625c82788f",  # cp311 win_amd64
        "5678f88c68ea866ed9ebe3a989091088553ba12c6090244fdae3e467b1139c35",  # cp38 macosx_10_9_x86_64
        "39becb03541f9e58243f4197584286e339029e8908c46f7221abeea4b749fa88",  # cp38 macosx_12_0_arm64
        "bce5869c8d68cf383ce240e44c1d9ae7c06078a9396df68ce88a1230f93a30c1",  # cp38 manylinux_2_17_aarch64
        "07c3457ce0b3ad5124f98a86533106b643dd811dd61b548e78cf4c8786652f6f",  # cp38 manylinux_2_17_x86_64
        "049a8bbf0ad95277ffba9b3b7d23e5369cc39e66406d60422c8cfef40ccc8415",  # cp38 win_amd64
        "cd9f1027ff30d90618914a64ca9b1a77a431159df0e2a195d8a9e8a04c78abf9",  # cp39 macosx_10_9_x86_64
        "79c8e5a6c6ffaf3a2262ef1be1e108a035cf4f05c14df56057b64acc5bebffb6",  # cp39 macosx_12_0_arm64
        "51af417a000d2dbe1ec6c372dfe688e041a7084da4fdd350aeb139bd3fb55353",  # cp39 manylinux_2_17_aarch64
        "1b4735d6c28aad3cdcf52117e0e91d6b39acd4272f3f5cd9907c24ee931ad601",  # cp39 manylinux_2_17_x86_64
        "7ff7f37b1bf4417baca958d254e8e2875d0cc23aaadbe65b3d5b3077b0eb23ea",  # cp39 win_amd64
    ),
    "onnxruntime==1.20.1": (
        "e50ba5ff7fed4f7d9253a6baf801ca2883cc08491f9d32d78a80da57256a5439",  # cp310 macosx_13_0_universal2
        "7b2908b50101a19e99c4d4e97ebb9905561daf61829403061c1adc1b588bc0de",  # cp310 manylinux_2_27_aarch64
        "d82daaec24045a2e87598b8ac2b417b1cce623244e80e663882e9fe1aae86410",  # cp310 manylinux_2_27_x86_64
        "4c4b251a725a3b8cf2aab284f7d940c26094ecd9d442f07dd81ab5470e99b83f",  # cp310 win32
        "d3b616bb53a77a9463707bb313637223380fc327f5064c9a782e8ec69c22e6a2",  # cp310 win_amd64
        "06bfbf02ca9ab5f28946e0f912a562a5f005301d0c419283dc57b3ed7969bb7b",  # cp311 macosx_13_0_universal2
        "f6243e34d74423bdd1edf0ae9596dd61023b260f546ee17d701723915f06a9f7",  # cp311 manylinux_2_27_aarch64
        "5eec64c0269dcdb8d9a9a53dc4d64f87b9e0c19801d9321246a53b7eb5a7d1bc",  # cp311 manylinux_2_27_x86_64
        "a19bc6e8c70e2485a1725b3d517a2319603acc14c1f1a017dda0afe6d4665b41",  # cp311 win32
        "8508887eb1c5f9537a4071768723ec7c30c28eb2518a00d0adcd32c89dea3221",  # cp311 win_amd64
        "22b0655e2bf4f2161d52706e31f517a0e54939dc393e92577df51808a7edc8c9",  # cp312 macosx_13_0_universal2
        "f1f56e898815963d6dc4ee1c35fc6c36506466eff6d16f3cb9848cea4e8c8172",  # cp312 manylinux_2_27_aarch64
        "bb71a814f66517a65628c9e4a2bb530a6edd2cd5d87ffa0af0f6f773a027d99e",  # cp312 manylinux_2_27_x86_64
        "bd386cc9ee5f686ee8a75ba74037750aca55183085bf1941da8efcfe12d5b120",  # cp312 win32
        "19c2d843eb074f385e8bbb753a40df780511061a63f9def1b216bf53860223fb",  # cp312 win_amd64
        "cc01437a32d0042b606f462245c8bbae269e5442797f6213e36ce61d5abdd8cc",  # cp313 macosx_13_0_universal2
        "fb44b08e017a648924dbe91b82d89b0c105b1adcfe31e90d1dc06b8677ad37be",  # cp313 manylinux_2_27_aarch64
        "bda6aebdf7917c1d811f21d41633df00c58aff2bef2f598f69289c1f1dabc4b3",  # cp313 manylinux_2_27_x86_64
        "d30367df7e70f1d9fc5a6a68106f5961686d39b54d3221f760085524e8d38e16",  # cp313 win_amd64
        "c9158465745423b2b5d97ed25aa7740c7d38d2993ee2e5c3bfacb0c4145c49d8",  # cp313 manylinux_2_27_aarch64
        "0df6f2df83d61f46e842dbcde610ede27218947c33e994545a22333491e72a3b",  # cp313 manylinux_2_27_x86_64
    ),
    "dask==2026.8.0": (
        "ccc0c83a189b0398602435189771d28dad7b5773b6089bb8dce14ae732dd782c",  # py3 any
    ),
    "distributed==2026.8.0": (
        "3bd8882861a2cf497453f28c6b61135fa8ef2bb1d6885ad3b9f27e887e9c0e01",  # py3 any
    ),
    "click==8.5.1": (
        "8bb5376d2006950386f8c6427613334a2acadc5f559cb80e638d00b4df957e37",  # py3 any
    ),
    "cloudpickle==3.1.3": (
        "1654f4f18e416447210a63c5c25a135d65a292156aa5fa519dfa4baf7726dddb",  # py3 any
    ),
    "fsspec==2026.9.0": (
        "8dd6e646e99ea382bd85f97a45e6b526a442d79423a7dc673f1e2756d05fcb5f",  # py3 any
    ),
    "importlib-metadata==10.2.0": (
        "c7a4bf1c7479601f6b8e437cfc14f4f77028ba62a8f34ae95cd93d9774dfba51",  # py3 any
    ),
    "lazy-importer==0.1.0": (
        "bd93fab7bef18e842eea02b839410954d37889140dc64ca4d9680aec6880c739",  # py3 any
    ),
    "zipp==4.1.2": (
        "b30cb6cd253122169c47de245ca24a86bac2a5d3802ba15bf7ba6414eb9e144d",  # py3 any
    ),
    "jinja2==3.1.2": (
        "6088930bfe239f0e6710546ab9c19c9ef35e29792895fed6e6e31a023a182a61",  # py3 any
    ),
    "markupsafe==2.1.2": (
        "665a36ae6f8f20a4676b53224e33d456a6f5a72657d9c83c2aa00765072f31f7",  # cp310 macosx_10_9_universal2
        "340bea174e9761308703ae988e982005aedf427de816d1afe98147668cc03036",  # cp310 macosx_10_9_x86_64
        "22152d00bf4a9c7c83960521fc558f55a1adbc0631fbb00a9471e097b19d72e1",  # cp310 manylinux_2_17_aarch64
        "28057e985dace2f478e042eaa15606c7efccb700797660629da387eb289b9323",  # cp310 manylinux_2_17_x86_64
        "ca244fa73f50a800cf8c3ebf7fd93149ec37f5cb9596aa8873ae2c1d23498601",  # cp310 manylinux_2_5_i686
        "d9d971ec1e79906046aa3ca266de79eac42f1dbf3612a05dc9368125952bd1a1",  # cp310 musllinux_1_1_aarch64
        "7e007132af78ea9df29495dbf7b5824cb71648d7133cf7848a2a5dd00d36f9ff",  # cp310 musllinux_1_1_i686
        "7313ce6a199651c4ed9d7e4cfb4aa56fe923b1adf9af3b420ee14e6d9a73df65",  # cp310 musllinux_1_1_x86_64
        "c4a549890a45f57f1ebf99c067a4ad0cb423a05544accaf2b065246827ed9603",  # cp310 win32
        "835fb5e38fd89328e9c81067fd642b3593c33e1e17e2fdbf77f5676abb14a156",  # cp310 win_amd64
        "2ec4f2d48ae59bbb9d1f9d7efb9236ab81429a764dedca114f5fdabbc3788013",  # cp311 macosx_10_9_universal2
        "608e7073dfa9e38a85d38474c082d4281f4ce276ac0010224eaba11e929dd53a",  # cp311 macosx_10_9_x86_64
        "65608c35bfb8a76763f37036547f7adfd09270fbdbf96608be2bead319728fcd",  # cp311 manylinux_2_17_aarch64
        "f2bfb563d0211ce16b63c7cb9395d2c682a23187f54c3d79bfec33e6705473c6",  # cp311 manylinux_2_17_x86_64
        "da25303d91526aac3672ee6d49a2f3db2d9502a4a60b55519feb1a4c7714e07d",  # cp311 manylinux_2_5_i686
        "9cad97ab29dfc3f0249b483412c85c8ef4766d96cdf9dcf5a1e3caa3f3661cf1",  # cp311 musllinux_1_1_aarch64
        "085fd3201e7b12809f9e6e9bc1e5c96a368c8523fad5afb02afe3c051ae4afcc",  # cp311 musllinux_1_1_i686
        "1bea30e9bf331f3fef67e0a3877b2288593c98a21ccb2cf29b74c581a4eb3af0",  # cp311 musllinux_1_1_x86_64
        "7df70907e00c970c60b9ef2938d894a9381f38e6b9db73c5be35e59d92e06625",  # cp311 win32
        "e55e40ff0cc8cc5c07996915ad367fa47da6b3fc091fdadca7f5403239c5fec3",  # cp311 win_amd64
        "a6e40afa7f45939ca356f348c8e23048e02cb109ced1eb8420961b2f40fb373a",  # cp37 macosx_10_9_x86_64
        "cf877ab4ed6e302ec1d04952ca358b381a882fbd9d1b07cccbfd61783561f98a",  # cp37 manylinux_2_17_aarch64
        "63ba06c9941e46fa389d389644e2d8225e0e3e5ebcc4ff1ea8506dce646f8c8a",  # cp37 manylinux_2_17_x86_64
        "f1cd098434e83e656abf198f103a8207a8187c0fc110306691a2e94a78d0abb2",  # cp37 manylinux_2_5_i686
        "55f44b440d491028addb3b88f72207d71eeebfb7b5dbf0643f7c023ae1fba619",  # cp37 musllinux_1_1_aarch64
        "a6f2fcca746e8d5910e18782f976489939d54a91f9411c32051b4aab2bd7c513",  # cp37 musllinux_1_1_i686
        "0b462104ba25f1ac006fdab8b6a01ebbfbce9ed37fd37fd4acd70c67c973e460",  # cp37 musllinux_1_1_x86_64
        "7668b52e102d0ed87cb082380a7e2e1e78737ddecdde129acadb0eccc5423859",  # cp37 win32
        "6d6607f98fcf17e534162f0709aaad3ab7a96032723d8ac8750ffe17ae5a0666",  # cp37 win_amd64
        "a806db027852538d2ad7555b203300173dd1b77ba116de92da9afbc3a3be3eed",  # cp38 macosx_10_9_universal2
        "a4abaec6ca3ad8660690236d11bfe28dfd707778e2442b45addd2f086d6ef094",  # cp38 macosx_10_9_x86_64
        "f03a532d7dee1bed20bc4884194a16160a2de9ffc6354b3878ec9682bb623c54",  # cp38 manylinux_2_17_aarch64
        "4cf06cdc1dda95223e9d2d3c58d3b178aa5dacb35ee7e3bbac10e4e1faacb419",  # cp38 manylinux_2_17_x86_64
        "22731d79ed2eb25059ae3df1dfc9cb1546691cc41f4e3130fe6bfbc3ecbbecfa",  # cp38 manylinux_2_5_i686
        "f8ffb705ffcf5ddd0e80b65ddf7bed7ee4f5a441ea7d3419e861a12eaf41af58",  # cp38 musllinux_1_1_aarch64
        "8db032bf0ce9022a8e41a22598eefc802314e81b879ae093f36ce9ddf39ab1ba",  # cp38 musllinux_1_1_i686
        "2298c859cfc5463f1b64bd55cb3e602528db6fa0f3cfd568d3605c50678f8f03",  # cp38 musllinux_1_1_x86_64
        "50c42830a633fa0cf9e7d27664637532791bfc31c731a87b202d2d8ac40c3ea2",  # cp38 win32
        "bb06feb762bade6bf3c8b844462274db0c76acc95c52abe8dbed28ae3d44a147",  # cp38 win_amd64
        "99625a92da8229df6d44335e6fcc558a5037dd0a760e11d84be2260e6f37002f",  # cp39 macosx_10_9_universal2
        "8bca7e26c1dd751236cfb0c6c72d4ad61d986e9a41bbf76cb445f69488b2a2bd",  # cp39 macosx_10_9_x86_64
        "40627dcf047dadb22cd25ea7ecfe9cbf3bbbad0482ee5920b582f3809c97654f",  # cp39 manylinux_2_17_aarch64
        "40dfd3fefbef579ee058f139733ac336312663c6706d1163b82b3003fb1925c4",  # cp39 manylinux_2_17_x86_64
        "090376d812fb6ac5f171e5938e82e7f2d7adc2b629101cec0db8b267815c85e2",  # cp39 manylinux_2_5_i686
        "2e7821bffe00aa6bd07a23913b7f4e01328c3d5cc0b40b36c0bd81d362faeb65",  # cp39 musllinux_1_1_aarch64
        "c0a33bc9f02c2b17c3ea382f91b4db0e6cde90b63b296422a939886a7a80de1c",  # cp39 musllinux_1_1_i686
        "b8526c6d437855442cdd3d87eede9c425c4445ea011ca38d937db299382e6fa3",  # cp39 musllinux_1_1_x86_64
        "137678c63c977754abe9086a3ec011e8fd985ab90631145dfb9294ad09c102a7",  # cp39 win32
        "0576fe974b40a400449768941d5d0858cc624e3249dfd1e0c33674e5c7ca7aed",  # cp39 win_amd64
    ),
    "locket==1.0.0": (
        "b6c819a722f7b6bd955b80781788e4a66a55628b858d347536b7e81325a3a5e3",  # py2.py3 any
    ),
    "msgpack==1.2.4": (
        "2a4e141a9c91d1502cf98f9ca9f87af222c7857e2bfa49c1d81343157c38a28e",  # cp310 macosx_10_9_x86_64
        "0626ea840cce866237c4da08439e9faa9cf79e6e4c62358978ee055961e8cff2",  # cp310 macosx_11_0_arm64
        "25e1f2466c4ea0fb9b694a922f75eb92d7ce6262eda8cb8a5dada34fe990d486",  # cp310 manylinux2014_aarch64
        "85b79ed643cfde70672152b3d1aee438ca647c5d2ffb7dba7226689ee9f6f44b",  # cp310 manylinux2014_x86_64
        "c1119e840d2c9164120f067740d99c9608d21d4ee9a172cf0f00dcafdf5624a4",  # cp310 manylinux_2_31_riscv64
        "ce22584c8b12aa7e424dab08c481afd95ad4bd3007829fd1767d28b4dbbc3167",  # cp310 musllinux_1_2_aarch64
        "8ab62a50cab6f786d49f3584914c1088b0ed8de76bfe675b26a60c7bec426380",  # cp310 musllinux_1_2_riscv64
        "429329799c72335b0e37be65964ec5b89062e57fe7ad9ee779b886df5e34ddaf",  # cp310 musllinux_1_2_x86_64
        "1cdb51af4f8f8d20af66ea9384883bf99b8ddb3cdf05f09eecda921646e15135",  # cp310 win32
        "d626fcacecaf3a5bfcd57e35709ce59a56a39cd4a3cd201d1b43c00d20bcbcda",  # cp310 win_amd64
        "1095b1ebcc8c9d3e70c51240b7160d8e9da66044e0a45c3ef8403d3a9ef0c5ad",  # cp311 macosx_10_9_x86_64
        "a4b47ec7422bef149223786a87df80067ac65bfc7c0565e5cf1dfbdc40acee50",  # cp311 macosx_11_0_arm64
        "0c75cfda0d3ccb1f6abc20e0608ad6b226e11f317b5ac297721504d2509e2bd9",  # cp311 manylinux2014_aarch64
        "a45ceb5f199d5e388f28b550ba881096a3740d4bda10e661d77f59d9a2e8187a",  # cp311 manylinux2014_x86_64
        "7ca62b31a873c70b73f367bb2c1efec1d143016642c5191405549578184ff6ff",  # cp311 manylinux_2_31_riscv64
        "f641971d3eec89ffca57fa36d151ad1cf1b6a214b47faca16cb165c7d45ef8be",  # cp311 musllinux_1_2_aarch64
        "b9eff629190a4b118549b654df32a56ed535351819f690d0c935d185500cc90b",  # cp311 musllinux_1_2_riscv64
        "4e22c6571ab6ac9036da87d8a6fddb4baf86981844b480c0c60a4a4be417ee48",  # cp311 musllinux_1_2_x86_64
        "5d7d4d2a5fc6a604f20c546ee1e8327bed1e9329be2417cef9af1f799f3e55e0",  # cp311 win32
        "9db832747bd05834530189e564a3fe31e2617547dc1f3a005f835eafc2b8e048",  # cp311 win_amd64
        "deb1730c4c0c1a8c975be2f43efea6ee4834d35031a39075f78917d0ba8b3c04",  # cp311 win_arm64
        "90cba4996b18ec1201fcaabd01ec48ff4b9755416bcd52105ded2f89fe145c49",  # cp312 macosx_10_13_x86_64
        "112933726919f4239646cca9572e2c2fa5626358c670da8440aac09403100a48",  # cp312 macosx_11_0_arm64
        "9ca1e78106675f2aed07dc37b842ce19be70010ab22c5c5c04688f0840d48539",  # cp312 manylinux2014_aarch64
        "c4d5bbdbea8f5669b3a734d6c226772804fb120848f99cbe63a0ddee63b049c9",  # cp312 manylinux2014_x86_64
        "0d9ff7f3aaffd84010f1c501b05406a497584f5cab2f732eb9d89bf960e12f6f",  # cp312 manylinux_2_31_riscv64
        "aa10dc04c03408f31948ac1896a942141fd8d7a954b3612edac79f19663e4076",  # cp312 musllinux_1_2_aarch64
        "472a25463678f2795143a7cb42e88a1b59cc2375e9881917e69a9323bde42114",  # cp312 musllinux_1_2_riscv64
        "cbb8a677da3e845713925e9a203b8a120b1e9da9989836890ba4a4a187902701",  # cp312 musllinux_1_2_x86_64
        "2b0b7dff5beddc10f16ecea6b28c6b98014d1135d7015bd83adff5037f35848d",  # cp312 win32
        "6e38b123681df22373d545520f54bbeddc4706d9235a1161061f12bd6648497d",  # cp312 win_amd64
        "6795c588b210b2f13d62c8fcc23bf779b509b839ec5c197a7ab4f5191459e126",  # cp312 win_arm64
        "fb811ac3d463a75013b234d2aae56b9f0bdb0105caf4dd2ee65305b6a8a6078d",  # cp313 macosx_10_13_x86_64
        "36258fd0909e1bf26e94604439108846432abe4ffa9a23c9dc2f6f1c60f94b60",  # cp313 macosx_11_0_arm64
        "e9c5ba0f053a7e98f013f083c9d1b2dffb26cad8c897c533d8286e44ed24c669",  # cp313 manylinux2014_aarch64
        "7fabd415c41e62006c6641fcdf5b3e866f581c4e11c58328c0d0f69584b9577d",  # cp313 manylinux2014_x86_64
        "7433d340de45003db3ed909a642c9469b598d175530f7a707cbaba64287d27ce",  # cp313 manylinux_2_31_riscv64
        "ccd6e4af5347eb9828147320449bcd30e3321f6397d4583ff16047485dd8be3d",  # cp313 musllinux_1_2_aarch64
        "23d1459a1d0b4c9f6629df072d592eb74424b3ed3656b69af507bc9023cc027f",  # cp313 musllinux_1_2_riscv64
        "9e73761fe9fc55a4e9d2df8e8f59b0979231af4dbf80b8bf90cd64c74173d779",  # cp313 musllinux_1_2_x86_64
        "d088d1f552e129859db830692268747aba0a1ee3e6e0fe6344dbb3aab1df9f6c",  # cp313 pyemscripten_2025_0_wasm32
        "892d4f17d7962bfd2c2928b0a47542bf2948f074a7c04721b73d4138b70481e4",  # cp313 win32
        "318d4e634d2b320be10decd9968ad1ae0be1d80cba23b5528c37b429eeb0e3e0",  # cp313 win_amd64
        "bec3e34749b90cfcf116149aad11295c720ff4a74a7d0a35abdb968a396c1524",  # cp313 win_arm64
        "895e9369185df4a874768849405c30cba7990caceb3fcb1692ebe62bb050f55e",  # cp314 macosx_10_15_x86_64
        "c97f5f17407e1761f23f1944be33cbf1d5ce67017db32544dcd5e16e0b1b4a3b",  # cp314 macosx_11_0_arm64
        "2444a4e04f924630d059ae6eae8f91fdfcd28ed9fd17b21bacf4e74550a091f7",  # cp314 manylinux2014_aarch64
        "5d65b791ce4283e02b6267742ad540899155e1b32887b9cbdda47f38f5a076b5",  # cp314 manylinux2014_x86_64
        "5e4c67dbac05dce90a3fa1d845137617383c415e6b319062baac9734540706ae",  # cp314 manylinux_2_31_riscv64
        "781e856db4f2cb398e4992e2a74305295d3ebf694eec26fa0f4bc766eb9fa0a0",  # cp314 musllinux_1_2_aarch64
        "cfc1cc237792f9a5664002b66acb961027d4184528ec9d10e0e42330f7972383",  # cp314 musllinux_1_2_riscv64
        "f60de6ae13d4d2a12a483f15c5e47cb6fa2731aa32d92fb31178e2017d6574a8",  # cp314 musllinux_1_2_x86_64
        "06a0657a4110d563255006b7cb7147432f67827144e429c2cdb1c967548d1817",  # cp314 pyemscripten_2026_0_wasm32
        "727a65b35db9f5ef516fc0229c4b05cab983092b1ae274a8a769b2d517fb0499",  # cp314 win32
        "80f5d4fda1ba373d95933f98e6c1d18247feffac839fda3930bdd85e6561bb5f",  # cp314 win_amd64
        "e5f67f0286f2ba2c6dbb4998404ed880112ca204ceda729cf239879cd89d3acf",  # cp314 win_arm64
        "45506bfb902cde24a0d33fb0581f58497ddb2682686dd1f6aa07e7b769df7ca4",  # cp314 macosx_10_15_x86_64
        "dc9dc681958e69f46b9f37def3e7fd6cc5dcfaa5943fb00bfe9c223a1a1052f6",  # cp314 macosx_11_0_arm64
        "0bef691e2a95119cc6bf3ded29325dbd89c4b6f8ff233070431948ed70902421",  # cp314 manylinux2014_aarch64
        "55e6106d2d085af42b2de72efeb38ed255241a24b32295ca889707c1d679c442",  # cp314 manylinux2014_x86_64
        "996dfc4774c240c8e6adf1166ae102141cfbed33c8856fde821bd6c0bd35ee41",  # cp314 manylinux_2_31_riscv64
        "efa1357fb0c7201e833de28638be371ee127476f7ccff9e7a94211b0afc33ddf",  # cp314 musllinux_1_2_aarch64
        "b9270b63409e70c8c6deb5faedc81fc27c6bd0196b38084a8773f68286abf034",  # cp314 musllinux_1_2_riscv64
        "2b597bb01aff61d65e305c2cf2589c93c86609929d42d575bfc359f3c54ea8e1",  # cp314 musllinux_1_2_x86_64
        "ad5bc540cbc34db236f8535721a9a872d12a9d88d1322470f1fc7c5e9dadfdb2",  # cp314 win32
        "287e52c2ebaa94f8eca045628374859f51584e77bc07086e6835a9bb2204c774",  # cp314 win_amd64
        "f3f19fe5decd348b35b003ae5f32d3fa90877413a0183da676f748a3a7ab9270",  # cp314 win_arm64
        "765584b93ed6f0b561f0c56e9735f24945c0682f857c9b3ee3b4caad9c32f66a",  # cp315 macosx_10_15_x86_64
        "0221748c30ace75fde0dec8c470abe65fb5374cd4f37adb9db6aca7a3c362c0a",  # cp315 macosx_11_0_arm64
        "c5917972ce1bf5f85f761031e00dab6fe0ad9f880cb3d2d43ed74b330c850400",  # cp315 manylinux2014_aarch64
        "e7ae8cf6012372cecb43016132d1b87ccc2ebb8ae5ab5078687399e82423386a",  # cp315 manylinux2014_x86_64
        "e78c66cf97ac5675037f705ca433ad98ac9177f9523e7fdbb34e486ae29044c8",  # cp315 manylinux_2_31_riscv64
        "59887281c3c163a7afff7dffaaad2f78cd2b513b7e1a7843f1ee8e7cd6a94231",  # cp315 musllinux_1_2_aarch64
        "9f46e70c8d22e96856967ab9d80c51dcf5bc63133e4da2d66fab64c0d4119b82",  # cp315 musllinux_1_2_riscv64
        "0a1fd6c31952155b7cd01061288c70303e6554ae855244dfb38a897fd94f8749",  # cp315 musllinux_1_2_x86_64
        "b1f08ec826417e3c8dc3edadb50f38debba033af6cb849229f0eac72f80f2342",  # cp315 pyemscripten_2026_5_wasm32
        "e8ba23c838739fe929e868095171e71f2f38d6ce0fcf5840b576fb82648e58e6",  # cp315 win32
        "67310606cf2528a6dc3ece1298dcd5cc6c57add148b16d22c5111138aa84820c",  # cp315 win_amd64
        "ce76e7a7c11459157887a8dadf07c107ff74eca98cf914f0de6ee7ab4b47104d",  # cp315 win_arm64
        "fb9ddbf23b8c6e89752af399fcf4daed60055e239cda44c6acfaa76d19331e8c",  # cp315 macosx_10_15_x86_64
        "e283cf563166c21762131b88e3870ee2ec57757b08a8736929757b5a67541061",  # cp315 macosx_11_0_arm64
        "40e91bf8325f492e8eb3c3aa6de06b20593c225336bb52b585c913d7c1da025b",  # cp315 manylinux2014_aarch64
        "cfa86432bf329d6b976f5a00ad4c9064fd51736e4967a52526750236345cc2da",  # cp315 manylinux2014_x86_64
        "42e0a7dc26df739149478585d4264338b4d330f24b3e3b57d5aa89e48866e8ab",  # cp315 manylinux_2_31_riscv64
        "8e680367090a58c966052d61418cc943111863538fd82471d61fca5271d911e1",  # cp315 musllinux_1_2_aarch64
        "a6c9926f8871b261622fe6b599db72c69be5bca8fdc0976886f9a531a301dee9",  # cp315 musllinux_1_2_riscv64
        "c50bac325dbf1a9c80e10da6dbd1100d7082f6b12e153084501e18e86cd3a037",  # cp315 musllinux_1_2_x86_64
        "34051de19ae532ba47fcab5b0abd08c25c7a64ff763ad819f18764d45f3c2c81",  # cp315 win32
        "6ad2f0808099d4281208ff2c756efa958a55a7c8eb21fe1c7052b95c584f02f1",  # cp315 win_amd64
        "e38d854f1c60e94f46d998765201126338bde3fe1b029be0d849094bcbef72c2",  # cp315 win_arm64
    ),
    "packaging==23.0": (
        "714ac14496c3e68c99c29b00845f7a2b85f3bb6f1078fd9f72fd20f0570002b2",  # py3 any
    ),
    "partd==1.4.2": (
        "978e4ac767ec4ba5b86c6eaa52e5a2a3bc748a2ca839e8cc798f1cc6ce6efb0f",  # py3 any
    ),
    "psutil==7.2.2": (
        "2edccc433cbfa046b980b0df0171cd25bcaeb3a68fe9022db0979e7aa74a826b",  # cp313 macosx_10_13_x86_64
        "e78c8603dcd9a04c7364f1a3e670cea95d51ee865e4efb3556a3a63adef958ea",  # cp313 macosx_11_0_arm64
        "1a571f2330c966c62aeda00dd24620425d4b0cc86881c89861fbc04549e5dc63",  # cp313 manylinux2010_x86_64
        "917e891983ca3c1887b4ef36447b1e0873e70c933afc831c6b6da078ba474312",  # cp313 manylinux2014_aarch64
        "ab486563df44c17f5173621c7b198955bd6b613fb87c71c161f827d3fb149a9b",  # cp313 win_amd64
        "ae0aefdd8796a7737eccea863f80f81e468a1e4cf14d926bd9b6f5f2d5f90ca9",  # cp313 win_arm64
        "eed63d3b4d62449571547b60578c5b2c4bcccc5387148db46e0c2313dad0ee00",  # cp314 macosx_10_15_x86_64
        "7b6d09433a10592ce39b13d7be5a54fbac1d1228ed29abc880fb23df7cb694c9",  # cp314 macosx_11_0_arm64
        "1fa4ecf83bcdf6e6c8f4449aff98eefb5d0604bf88cb883d7da3d8d2d909546a",  # cp314 manylinux2010_x86_64
        "e452c464a02e7dc7822a05d25db4cde564444a67e58539a00f929c51eddda0cf",  # cp314 manylinux2014_aarch64
        "c7663d4e37f13e884d13994247449e9f8f574bc4655d509c3b95e9ec9e2b9dc1",  # cp314 win_amd64
        "11fe5a4f613759764e79c65cf11ebdf26e33d6dd34336f8a337aa2996d71c841",  # cp314 win_arm64
        "ed0cace939114f62738d808fdcecd4c869222507e266e574799e9c0faa17d486",  # cp36 macosx_10_9_x86_64
        "1a7b04c10f32cc88ab39cbf606e117fd74721c831c98a27dc04578deb0c16979",  # cp36 macosx_11_0_arm64
        "076a2d2f923fd4821644f5ba89f059523da90dc9014e85f8e45a5774ca5bc6f9",  # cp36 manylinux2010_x86_64
        "b0726cecd84f9474419d67252add4ac0cd9811b04d61123054b9fb6f57df6e9e",  # cp36 manylinux2014_aarch64
        "fd04ef36b4a6d599bbdb225dd1d3f51e00105f6d48a28f006da7f9822f2606d8",  # cp36 musllinux_1_2_aarch64
        "b58fabe35e80b264a4e3bb23e6b96f9e45a3df7fb7eed419ac0e5947c61e47cc",  # cp36 musllinux_1_2_x86_64
        "eb7e81434c8d223ec4a219b5fc1c47d0417b12be7ea866e24fb5ad6e84b3d988",  # cp37 win_amd64
        "8c233660f575a5a89e6d4cb65d9f938126312bca76d8fe087b947b3a1aaac9ee",  # cp37 win_arm64
    ),
    "pyyaml==6.0": (
        "d4db7c7aef085872ef65a8fd7d6d09a14ae91f691dec3e87ee5ee0539d516f53",  # cp310 macosx_10_9_x86_64
        "9df7ed3b3d2e0ecfe09e14741b857df43adb5a3ddadc919a2d94fbdf78fea53c",  # cp310 macosx_11_0_arm64
        "77f396e6ef4c73fdc33a9157446466f1cff553d979bd00ecb64385760c6babdc",  # cp310 manylinux_2_17_aarch64
        "a80a78046a72361de73f8f395f1f1e49f956c6be882eed58505a15f3e430962b",  # cp310 manylinux_2_17_s390x
        "f84fbc98b019fef2ee9a1cb3ce93e3187a6df0b2538a651bfb890254ba9f90b5",  # cp310 manylinux_2_5_x86_64
        "2cd5df3de48857ed0544b34e2d40e9fac445930039f3cfe4bcc592a1f836d513",  # cp310 win32
        "daf496c58a8c52083df09b80c860005194014c3698698d1a57cbcfa182142a3a",  # cp310 win_amd64
        "d4b0ba9512519522b118090257be113b9468d804b19d63c71dbcf4a48fa32358",  # cp311 macosx_10_9_x86_64
        "81957921f441d50af23654aa6c5e5eaf9b06aba7f0a19c18a538dc7ef291c5a1",  # cp311 macosx_11_0_arm64
        "afa17f5bc4d1b10afd4466fd3a44dc0e245382deca5b3c353d8b757f9e3ecb8d",  # cp311 manylinux_2_17_aarch64
        "dbad0e9d368bb989f4515da330b88a057617d16b6a8245084f1b05400f24609f",  # cp311 manylinux_2_17_s390x
        "432557aa2c09802be39460360ddffd48156e30721f5e8d917f01d31694216782",  # cp311 manylinux_2_17_x86_64
        "bfaef573a63ba8923503d27530362590ff4f576c626d86a9fed95822a8255fd7",  # cp311 win32
        "01b45c0191e6d66c470b6cf1b9531a771a83c1c4208272ead47a3ae4f2f603bf",  # cp311 win_amd64
        "897b80890765f037df3403d22bab41627ca8811ae55e9a722fd0392850ec4d86",  # cp36 macosx_10_9_x86_64
        "50602afada6d6cbfad699b0c7bb50d5ccffa7e46a3d738092afddc1f9758427f",  # cp36 manylinux_2_17_aarch64
        "48c346915c114f5fdb3ead70312bd042a953a8ce5c7106d5bfb1a5254e47da92",  # cp36 manylinux_2_17_s390x
        "98c4d36e99714e55cfbaaee6dd5badbc9a1ec339ebfc3b1f52e293aee6bb71a4",  # cp36 manylinux_2_5_x86_64
        "0283c35a6a9fbf047493e3a0ce8d79ef5030852c51e9d911a27badfde0605293",  # cp36 win32
        "07751360502caac1c067a8132d150cf3d61339af5691fe9e87803040dbc5db57",  # cp36 win_amd64
        "819b3830a1543db06c4d4b865e70ded25be52a2e0631ccd2f6a47a2822f2fd7c",  # cp37 macosx_10_9_x86_64
        "473f9edb243cb1935ab5a084eb238d842fb8f404ed2193a915d1784b5a6b5fc0",  # cp37 manylinux_2_17_aarch64
        "0ce82d761c532fe4ec3f87fc45688bdd3a4c1dc5e0b4a19814b9009a29baefd4",  # cp37 manylinux_2_17_s390x
        "231710d57adfd809ef5d34183b8ed1eeae3f76459c18fb4a0b373ad56bedcdd9",  # cp37 manylinux_2_5_x86_64
        "c5687b8d43cf58545ade1fe3e055f70eac7a5a1a0bf42824308d868289a95737",  # cp37 win32
        "d15a181d1ecd0d4270dc32edb46f7cb7733c7c508857278d3d378d14d606db2d",  # cp37 win_amd64
        "0b4624f379dab24d3725ffde76559cff63d9ec94e1736b556dacdfebe5ab6d4b",  # cp38 macosx_10_9_x86_64
        "213c60cd50106436cc818accf5baa1aba61c0189ff610f64f4a3e8c6726218ba",  # cp38 manylinux_2_17_aarch64
        "9fa600030013c4de8165339db93d182b9431076eb98eb40ee068700c9c813e34",  # cp38 manylinux_2_17_s390x
        "277a0ef2981ca40581a47093e9e2d13b3f1fbbeffae064c1d21bfceba2030287",  # cp38 manylinux_2_5_x86_64
        "d4eccecf9adf6fbcc6861a38015c2a64f38b9d94838ac1810a9023a0609e1b78",  # cp38 win32
        "1e4747bc279b4f613a09eb64bba2ba602d8a6664c6ce6396a4d0cd413a50ce07",  # cp38 win_amd64
        "055d937d65826939cb044fc8c9b08889e8c743fdc6a32b33e2390f66013e449b",  # cp39 macosx_10_9_x86_64
        "e61ceaab6f49fb8bdfaa0f92c4b57bcfbea54c09277b1b4f7ac376bfb7a7c174",  # cp39 macosx_11_0_arm64
        "d67d839ede4ed1b28a4e8909735fc992a923cdb84e618544973d7dfc71540803",  # cp39 manylinux_2_17_aarch64
        "cba8c411ef271aa037d7357a2bc8f9ee8b58b9965831d9e51baf703280dc73d3",  # cp39 manylinux_2_17_s390x
        "40527857252b61eacd1d9af500c3337ba8deb8fc298940291486c465c8b46ec0",  # cp39 manylinux_2_5_x86_64
        "b5b9eccad747aabaaffbc6064800670f0c297e52c12754eb1d976c57e4f74dcb",  # cp39 win32
        "b3d267842bf12586ba6c734f89d1f5b871df0273157918b0ccefa29deb05c21c",  # cp39 win_amd64
    ),
    "sortedcontainers==2.4.0": (
        "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0",  # py2.py3 any
    ),
    "tblib==3.2.2": (
        "26bdccf339bcce6a88b2b5432c988b266ebbe63a4e593f6b578b1d2e723d2b76",  # py3 any
    ),
    "toolz==1.2.0": (
        "890f820b1cb8152785aaf9386d8707770110809035800985ca65cb24ce1120ef",  # py3 any
    ),
    "tornado==6.6.1": (
        "a8d3e6acde5a80d13b13b5e4c7c226ca682f31d0a62b6c33cea038714bc2de1b",  # cp311 macosx_10_9_universal2
        "1b6ff57cc69b339f8feb9e7b567b0e0eacb16bfaf234159496623ef7a67ba640",  # cp311 manylinux1_x86_64
        "da6ce2da215810d56539fa6cac77d9e27f4d8139c6868c53436b2fe933f43c79",  # cp311 manylinux2014_aarch64
        "8cd28b2cacbe63d53e28a38546a3492b488417eeb3f7ecf10954476fc2508882",  # cp311 manylinux2014_ppc64le
        "25b2619274bca77d0eb7b4d96dcf2d1142bb9bf172ad6a7491a1e1f82e6e48fa",  # cp311 manylinux2014_s390x
        "77dd6e0c659fdc45824e0746988ac5c060c2a9fee9b8cbbcdb999b3f29d3cd10",  # cp311 manylinux_2_31_riscv64
        "b62fded687e55acaf9e36c1230b006066a35b3f6df093ba1fd3b2ff592070e1d",  # cp311 musllinux_1_2_aarch64
        "ecef88054d8a77878f61061ff67dfc5e1c17d1f7334890ab508b310e8e68ee46",  # cp311 musllinux_1_2_ppc64le
        "ca95e762df1ca761f330e3f2a034c15ac144569844b52527a5a9eca9f524c0f1",  # cp311 musllinux_1_2_riscv64
        "8cae3d8f2585be01670da9fd5010c61724c51b61ecd4c06820e95874739daf7c",  # cp311 musllinux_1_2_s390x
        "6596f3e939962f13099ce8d1a96b83226e908ca369b193370a6efa84585a1601",  # cp311 musllinux_1_2_x86_64
        "0f0f596a0dab6826aa21d103c7bc242e3fb7cfc99c5c3d44a35ba8c83abbdca4",  # cp311 win32
        "5cb82ca38596e1350fceaf994f287847f82f7b8436380d36ba0937a03107d0ee",  # cp311 win_amd64
        "58d2f47e7b54fded3407dbbbe4e59d29ca627f85bf6c0f21f0b151c6c7fc9c53",  # cp311 win_arm64
        "ed0bc5a1a9f6346e7bdadc106fa2d4c6e79d71d8b2df4366260ab3baf36a8399",  # cp314 macosx_10_15_universal2
        "54c80f9bed0bf1533ecf5a90dc59651645622d62b0bcffa2692d108a1f794917",  # cp314 manylinux1_x86_64
        "eb67ba2cbf598e842f14684eab029a5a4ba7ab587e8c4e40940a77ed0596b31e",  # cp314 manylinux2014_aarch64
        "d83bac141bd9360d8e995ec512097be19ead2e9213c3e7088510a036f3192b8d",  # cp314 manylinux2014_ppc64le
        "60aad449dbcebaa8d69bff50c6ba39858fab8d256e779a99bb30ebf6724b9b48",  # cp314 manylinux2014_s390x
        "b9ce0d6548bd73b1329075b247d3fdc61538922f558ee42059e08f5df53fc197",  # cp314 manylinux_2_31_riscv64
        "ce5a18654f5d56d11400ab5d87103660e14deceab41818a06a42acc8dbbe427d",  # cp314 musllinux_1_2_aarch64
        "3298fce72c35f836eab4c4db8b960104ff1ea718033a6b5e236f04efe3a1b6e1",  # cp314 musllinux_1_2_ppc64le
        "0223e827cedf4e35ebb035e57a0d9974563cd043e3a53f8bb72a859b6f53777e",  # cp314 musllinux_1_2_riscv64
        "533185c89be3ffb01656c9425da4ff42587a3af784b37d39fe762e8fce3b2dbe",  # cp314 musllinux_1_2_s390x
        "fbaa022a49a27b65668592cf43b898ff3978cbe4e6926fdfe24dbef59053bd26",  # cp314 musllinux_1_2_x86_64
        "4bc6c60faf86162df25ba2ff5611d27b6ef8226de9d61c07a0fab53c169630a5",  # cp314 win32
        "71c16b382b22d3234913a3f74a1ea84bede197d11eb03871df17bb123088dfa5",  # cp314 win_amd64
        "510c7261ed986ecd6f74edc1a13412759e7abc2e8be3a6c85e15f6c53e1f3c84",  # cp314 win_arm64
        "01dc73e3697eb94d78c42e03931ab621da97d12fdfb6339e64ff5a934b220fcf",  # cp315 macosx_10_15_universal2
        "95bd4751357bef52aa655e236b9667ff054885de4b118e4ce9ba5c06e12ef5d0",  # cp315 manylinux1_x86_64
        "29bce3190c2973fcd2171c95eeab8bf06d2f7a7eb107455ce3e4662c704aecdb",  # cp315 manylinux2014_aarch64
        "b777fbe0bdb2c4dc764aadf5f70e9b23b2e536c339d61c799d3ea1b575a7c285",  # cp315 manylinux2014_ppc64le
        "15443805d6b7aa11610cc6c5be7e71b4a93369aeb2ca5a13c2def53a3af5ba45",  # cp315 manylinux2014_s390x
        "b77ab23d1520c807d11e703e79b020d3bc3676a0f5ebc8531f46d3fac8aecb2f",  # cp315 manylinux_2_31_riscv64
        "872249311539281c1e8a5d8d6f27f478bf705a9bd931bf374b6b31b05177dfda",  # cp315 musllinux_1_2_aarch64
        "08b808e8d3312c268f9fe1ffebfcfaaf342e7fe4ac40d219a7e1b58bac547d6f",  # cp315 musllinux_1_2_ppc64le
        "8d475f4053c693b5c1483eb4845824129b0b51c65712e736b3c2ea1c8f6080cd",  # cp315 musllinux_1_2_riscv64
        "e923e75c9d641cdb8bbac60070a2dccdb684fc555af2bff48b0eaded0f88c2dc",  # cp315 musllinux_1_2_s390x
        "a72f70b1aa630fa2106d39a025e2be75c272b7ec8233da94e2f407ea754cc32d",  # cp315 musllinux_1_2_x86_64
        "2fbfd2510b6163b189773155a8246c025cb260ccc7cd12ad18c36c54f5617bb9",  # cp315 win32
        "3c35091add5863feb9cf651851bb1b23592f1f9551b5dfed72837c83ea4e5b85",  # cp315 win_amd64
        "065bc741478b168df9baf754956a3010c04d1330bb45a84833d807c29e11b257",  # cp315 win_arm64
    ),
    "zict==3.0.0": (
        "5796e36bd0e0cc8cf0fbc1ace6a68912611c1dbd74750a3f3026b9b9d6a327ae",  # py2.py3 any
    ),
}
