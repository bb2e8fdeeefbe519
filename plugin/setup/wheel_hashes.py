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
}
